/// Policy files found by fuzzing whose diagnostics once cost far more than their size (issue 12), generated
/// at any size: the policy and lint tests both time them.
public enum HostilePolicies {
    /// A service naming an unknown authoriser of `length + 1` characters beside a declared one differing only
    /// in its last character: the full edit-distance table was `length²` cells.
    public static func nearLongAuthoriserNames(length: Int) -> String {
        let stem = String(repeating: "a", count: length)
        return """
            version: 1
            authorisers:
              ? \(stem)b
              : {plugin: static-bearer, settings: {token: '${env:T}'}}
            services:
              s:
                hosts: [h.example.com]
                authoriser: \(stem)c

            """
    }

    /// An anchored key of `keyLength` characters under `x:`, then `aliases` lines repeating it by alias: each
    /// is a duplicate key whose message once quoted the whole key. Diagnostics: the unknown key `x` (line 2)
    /// and one duplicate key per alias.
    public static func aliasedDuplicateKeys(keyLength: Int, aliases: Int) -> String {
        // An explicit key ('? '): libyaml refuses implicit keys longer than 1,024 characters.
        var yaml = "version: 1\nx:\n  ? &k " + String(repeating: "k", count: keyLength) + "\n  : 0\n"
        yaml.reserveCapacity(yaml.utf8.count + aliases * 8)
        for _ in 0..<aliases { yaml += "  *k : 0\n" }
        return yaml
    }

    /// The bound for linear work in a debug build: a second, plus 5 µs per byte (compiling the 1.7 MB
    /// 10,000-service policy costs about 1 µs per byte of CPU in a debug build).
    public static func linearBound(_ yaml: String) -> Duration {
        .seconds(1) + .microseconds(5 * yaml.utf8.count)
    }
}
