
/// A request's URL as logs and spans show it (`url.full`): never with credentials or query secrets.
///
/// - Userinfo (`user:password@`) is removed.
/// - The value of a query item is replaced by `REDACTED` when its name is one OpenTelemetry lists
///   (`AWSAccessKeyId`, `Signature`, `sig`, `X-Goog-Signature`) or a common credential name (`access_token`,
///   `api_key`, `api-key`, `apikey`, `key`, `token`, `client_secret`, `password`, `secret`), compared without case,
///   or when the route's authoriser added or changed an item of that name: whatever an authoriser puts in the
///   query is a credential.
/// - The fragment, which is never sent, is dropped.
enum TelemetryURL {
    static let redacted = "REDACTED"

    /// Query item names whose values are always redacted (lower-cased).
    static let secretNames: Set<String> = [
        "awsaccesskeyid", "signature", "sig", "x-goog-signature", "access_token", "api_key", "api-key", "apikey", "key",
        "token", "client_secret", "password", "secret",
    ]

    /// `url` (as the caller wrote it) without userinfo, fragment and query secrets; `also` names more items to
    /// redact (lower-cased).
    static func full(_ url: String, redacting also: Set<String> = []) -> String {
        if !needsRewriting(url, also: also) { return url }
        var text = Substring(url)
        if let hash = text.firstIndex(of: "#") { text = text[..<hash] }
        if let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://") {
            let authorityStart = text.index(colon, offsetBy: 3)
            let rest = text[authorityStart...]
            let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
            if let at = rest[..<authorityEnd].lastIndex(of: "@") {
                text = text[..<authorityStart] + text[text.index(after: at)...]
            }
        }
        guard let question = text.firstIndex(of: "?") else { return String(text) }
        let query = text[text.index(after: question)...]
        return String(text[...question]) + redactQuery(query, also: also)
    }

    /// The names of the query items of `sent` that are not in `original` item for item (added or changed by an
    /// authoriser), lower-cased.
    static func addedNames(sent: String?, original: String?) -> Set<String> {
        guard let sent, !sent.isEmpty else { return [] }
        let before = Set((original ?? "").split(separator: "&"))
        var names: Set<String> = []
        for item in sent.split(separator: "&") where !before.contains(item) {
            names.insert(name(of: item))
        }
        return names
    }

    /// Whether `url` has userinfo, a fragment or a query item to redact (the common answer, no, without
    /// allocating).
    private static func needsRewriting(_ url: String, also: Set<String>) -> Bool {
        var sawQuery = false
        for byte in url.utf8 {
            switch byte {
            case UInt8(ascii: "@"), UInt8(ascii: "#"): return true
            case UInt8(ascii: "?"): sawQuery = true
            default: continue
            }
        }
        guard sawQuery, let question = url.utf8.firstIndex(of: UInt8(ascii: "?")) else { return false }
        let query = url[url.index(after: question)...]
        return query.split(separator: "&").contains { item in
            let name = name(of: item)
            return item.contains("=") && (secretNames.contains(name) || also.contains(name))
        }
    }

    private static func redactQuery(_ query: Substring, also: Set<String>) -> String {
        query.split(separator: "&", omittingEmptySubsequences: false).map { item -> String in
            let name = name(of: item)
            guard item.contains("="), secretNames.contains(name) || also.contains(name) else { return String(item) }
            return String(item[..<item.firstIndex(of: "=")!]) + "=" + redacted
        }.joined(separator: "&")
    }

    private static func name(of item: Substring) -> String {
        String(item.prefix { $0 != "=" }).lowercased()
    }
}
