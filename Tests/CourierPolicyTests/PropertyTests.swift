import CourierCore
import CourierPolicy
import CourierTestSupport
import Testing

/// Random input never crashes or hangs the compiler, and every answer is well-formed.
@Suite(.onThreadsOfTheirOwn) struct PropertyTests {
    /// Keys from the language mixed with junk, so random documents reach deep into the checks.
    static let keys = [
        "version", "include", "defaults", "authorisers", "services", "timeouts", "retry", "rate-limit", "hosts",
        "scheme", "authoriser", "fallbacks", "tls", "cache", "connect", "idle", "total", "max-attempts", "on",
        "methods", "backoff", "initial", "max", "multiplier", "jitter", "budget", "ratio", "min-per-second",
        "idempotency-key", "respect-retry-after", "retry-after-cap", "requests-per-second", "burst", "endpoints",
        "/v1/search", "pins", "ca-file", "min-version", "ttl", "max-size", "plugin", "settings", "timeout",
        "allow-plain-http", "token", "token-url", "client-id", "api.example.com", "*.example.com", "x", "<<", "",
    ]
    static let scalars = [
        "1", "0", "-1", "3.5", "1e308", "true", "false", "off", "none", "null", "~", "5s", "250ms", "1h30m", "5",
        "10MiB", "https", "http", "GET", "POST", "full", "decorrelated", "\"1.2\"", "connect-error", "429", "700",
        "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "\"${env:X}\"", "\"${env:}\"", "\"${oops\"",
        "api.example.com", "\"*.example.com\"", "\"[::1]\"", "192.0.2.1", "static-bearer", "oauth2-refresh",
        "common.yaml", "missing.yaml", "'quoted'", "\"\\u00e9\"", "|\n  block\n", "!!str 5", "&a 1", "*a",
    ]

    func randomNode(depth: Int, _ g: inout SplitMix64) -> String {
        let roll = Int.random(in: 0..<10, using: &g)
        if depth > 4 || roll < 4 { return Self.scalars.randomElement(using: &g)! }
        let indent = String(repeating: "  ", count: depth + 1)
        if roll < 6 {
            let n = Int.random(in: 0...3, using: &g)
            if n == 0 { return "[]" }
            return "\n" + (0..<n).map { _ in indent + "- " + randomNode(depth: depth + 1, &g).replacingNewlines(indent + "  ") }.joined(separator: "\n")
        }
        let n = Int.random(in: 0...4, using: &g)
        if n == 0 { return "{}" }
        return "\n" + (0..<n).map { _ in indent + "\"" + Self.keys.randomElement(using: &g)! + "\": " + randomNode(depth: depth + 1, &g) }.joined(separator: "\n")
    }

    func check(_ result: PolicyCompilation) {
        #expect(result.hasErrors == (result.graph == nil))
        #expect(result.diagnostics == result.diagnostics.sorted { ($0.location, $0.rule, $0.message) < ($1.location, $1.rule, $1.message) })
        for d in result.diagnostics {
            #expect(PolicyRule.named(d.rule)?.severity == d.severity, "\(d)")
            #expect(d.location.line >= 1 && d.location.column >= 1)
            #expect(!d.message.isEmpty)
        }
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func randomStructuresNeverCrash(seed: UInt64) {
        var g = SplitMix64(seed: seed)
        for _ in 0..<150 {
            var yaml = Bool.random(using: &g) ? "version: 1\n" : ""
            for _ in 0..<Int.random(in: 1...5, using: &g) {
                yaml += Self.keys.randomElement(using: &g)! .quotedKey + ": " + randomNode(depth: 0, &g) + "\n"
            }
            check(compile(yaml))
        }
    }

    @Test(arguments: [11, 12] as [UInt64])
    func mutatedValidPoliciesNeverCrash(seed: UInt64) throws {
        var g = SplitMix64(seed: seed)
        let original = try #require(readText(Fixtures.path("issue-example.yaml")))
        let bytes = Array(original.utf8)
        for _ in 0..<150 {
            var mutated = bytes
            for _ in 0..<Int.random(in: 1...8, using: &g) {
                let i = Int.random(in: 0..<mutated.count, using: &g)
                switch Int.random(in: 0..<3, using: &g) {
                case 0: mutated[i] = UInt8.random(in: 0x20...0x7E, using: &g)
                case 1: mutated.remove(at: i)
                default: mutated.insert(UInt8.random(in: 0...255, using: &g), at: i)
                }
            }
            // Through the file path, so invalid UTF-8 reaches the compiler as bytes.
            let dir = try makeTemporaryDirectory()
            try writeFile(dir + "/m.yaml", mutated)
            check(PolicyCompiler().compile(file: dir + "/m.yaml"))
        }
    }

    @Test func randomBytesNeverCrash() throws {
        var g = SplitMix64(seed: 99)
        let dir = try makeTemporaryDirectory()
        for i in 0..<100 {
            let count = Int.random(in: 0...2048, using: &g)
            let alphabet = Array("{}[]:-,&*!|>'\"#%@` \n\tab1".utf8)
            let bytes: [UInt8] = (0..<count).map { _ in
                Bool.random(using: &g) ? alphabet.randomElement(using: &g)! : UInt8.random(in: 0...255, using: &g)
            }
            try writeFile(dir + "/r\(i).yaml", bytes)
            let result = PolicyCompiler().compile(file: dir + "/r\(i).yaml")
            check(result)
            #expect(result.hasErrors)
        }
    }
}

extension String {
    func replacingNewlines(_ indent: String) -> String {
        split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\n" + indent)
    }

    var quotedKey: String { "\"" + self + "\"" }
}
