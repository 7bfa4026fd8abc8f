import CourierCore
import CourierPolicy
import Testing

/// The `coordination:` section: every key, the defaults, and each bad input with its diagnostic and its exact
/// position.
@Suite struct CoordinationPolicyTests {
    @Test func everyKeyIsParsed() throws {
        let result = compile("""
            version: 1
            coordination:
              redis:
                url: "rediss://Redis.Internal:6380/2"
                username: courier
                password: "${env:REDIS_PASSWORD}"
                key-prefix: "courier:myapp:"
                timeout: 20ms
                token-key: "${file:secrets/token-key}"
                tls: { pins: ["sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "sha256/BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBA="], ca-file: certs/ca.pem, min-version: "1.3" }
              on-unavailable: closed
            """)
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        let coordination = try #require(result.graph?.coordination)
        #expect(coordination.onUnavailable == .closed)
        #expect(coordination.definedAt == SourceLocation(file: Fixtures.path("inline.yaml"), line: 2, column: 1))
        let redis = coordination.redis
        #expect(redis.url == "rediss://Redis.Internal:6380/2", "kept as written")
        #expect(redis.endpoint == RedisEndpoint(host: "redis.internal", port: 6380, database: 2, usesTLS: true))
        #expect(redis.username == PolicyString(literal: "courier"))
        #expect(redis.password?.references == [SecretReference(source: .env, name: "REDIS_PASSWORD")])
        #expect(redis.keyPrefix == "courier:myapp:")
        #expect(redis.timeout == .milliseconds(20))
        // A file reference is made absolute against the policy's directory, as authoriser settings are.
        #expect(redis.tokenKey?.references == [SecretReference(source: .file, name: Fixtures.path("secrets/token-key"))])
        let tls = try #require(redis.tls)
        #expect(tls.pins.count == 2)
        #expect(tls.caFile == Fixtures.path("certs/ca.pem"))
        #expect(tls.minVersion == .tls13)
        #expect(coordination.origins["redis.url"]?.line == 4)
        #expect(coordination.origins["redis.token-key"]?.line == 9)
        #expect(coordination.origins["on-unavailable"]?.line == 11)
    }

    @Test func defaultsOfAMinimalSection() throws {
        let graph = try #require(compile("version: 1\ncoordination:\n  redis: { url: \"redis://127.0.0.1\" }\n").graph)
        let coordination = try #require(graph.coordination)
        #expect(coordination.onUnavailable == .local)
        let redis = coordination.redis
        #expect(redis.endpoint == RedisEndpoint(host: "127.0.0.1", port: 6379, database: 0, usesTLS: false))
        #expect(redis.keyPrefix == "courier:")
        #expect(redis.timeout == .milliseconds(50))
        #expect(redis.username == nil && redis.password == nil && redis.tokenKey == nil && redis.tls == nil)
        #expect(coordination.origins.keys.sorted() == ["redis.url"], "the rest took their defaults")
    }

    @Test func aPolicyWithoutTheSectionHasNoCoordination() throws {
        let graph = try #require(compile("version: 1\nservices:\n  a: { hosts: [a.example.com] }\n").graph)
        #expect(graph.coordination == nil)
        #expect(graph.services[0].rateLimit == .unlimited)
    }

    /// A bad value of the section (a line under `redis:`), the rule it breaks, the line and the text on it where
    /// the diagnostic points, and what its message says.
    static let badInputs: [(yaml: String, rule: String, line: Int, at: String, message: String)] = [
        (yaml: "url: \"http://127.0.0.1:6379\"", rule: "invalid-redis-url", line: 4, at: "\"http", message: "has the scheme 'http', not redis or rediss"),
        (yaml: "url: \"Redis://127.0.0.1\"", rule: "invalid-redis-url", line: 4, at: "\"Redis", message: "has the scheme 'Redis', not redis or rediss"),
        (yaml: "url: \"redis://:s3cret@127.0.0.1:6379\"", rule: "invalid-redis-url", line: 4, at: "\"redis", message: "the Redis URL holds a password"),
        (yaml: "url: \"redis://default:s3cret@127.0.0.1\"", rule: "invalid-redis-url", line: 4, at: "\"redis", message: "the Redis URL holds a password"),
        (yaml: "url: \"redis://app@127.0.0.1\"", rule: "invalid-redis-url", line: 4, at: "\"redis", message: "names a user"),
        (yaml: "url: \"redis://127.0.0.1:0\"", rule: "invalid-redis-url", line: 4, at: "\"redis", message: "has the port '0', not a number from 1 to 65535"),
        (yaml: "url: \"redis://127.0.0.1:65536\"", rule: "invalid-redis-url", line: 4, at: "\"redis", message: "has the port '65536'"),
        (yaml: "url: \"redis://127.0.0.1:+80\"", rule: "invalid-redis-url", line: 4, at: "\"redis", message: "has the port '+80'"),
        (yaml: "url: \"redis://127.0.0.1/-1\"", rule: "invalid-redis-url", line: 4, at: "\"redis", message: "has the database '-1', not a non-negative number"),
        (yaml: "url: \"redis://127.0.0.1/db\"", rule: "invalid-redis-url", line: 4, at: "\"redis", message: "has the database 'db'"),
        (yaml: "url: \"redis://127.0.0.1/0?timeout=1\"", rule: "invalid-redis-url", line: 4, at: "\"redis", message: "has a query or fragment"),
        (yaml: "url: \"redis://::1\"", rule: "invalid-redis-url", line: 4, at: "\"redis", message: "has an IPv6 address without brackets"),
        (yaml: "url: \"redis://[nope]:6379\"", rule: "invalid-redis-url", line: 4, at: "\"redis", message: "has no valid host"),
        (yaml: "url: \"redis://\"", rule: "invalid-redis-url", line: 4, at: "\"redis", message: "names no host"),
        (yaml: "url: \"redis:///0\"", rule: "invalid-redis-url", line: 4, at: "\"redis", message: "names no host"),
        (yaml: "url: [redis://a]", rule: "wrong-type", line: 4, at: "[", message: "'coordination.redis.url' must be a string"),
        (yaml: "url: redis://a\n    key-prefix: \"has space\"", rule: "invalid-value", line: 5, at: "\"has", message: "must be 1 to 64 printable ASCII characters without spaces"),
        (yaml: "url: redis://a\n    key-prefix: \"\"", rule: "invalid-value", line: 5, at: "\"\"", message: "must be 1 to 64 printable ASCII characters"),
        (yaml: "url: redis://a\n    key-prefix: \"\(String(repeating: "k", count: 65))\"", rule: "invalid-value", line: 5, at: "\"k", message: "must be 1 to 64"),
        (yaml: "url: redis://a\n    key-prefix: \"cöurier:\"", rule: "invalid-value", line: 5, at: "\"c", message: "printable ASCII"),
        (yaml: "url: redis://a\n    timeout: 0ms", rule: "invalid-duration", line: 5, at: "0ms", message: "'coordination.redis.timeout' must be longer than zero"),
        (yaml: "url: redis://a\n    timeout: 0s", rule: "invalid-duration", line: 5, at: "0s", message: "must be longer than zero"),
        (yaml: "url: redis://a\n    timeout: 11s", rule: "invalid-value", line: 5, at: "11s", message: "is 11s, longer than the 10s a command may take"),
        (yaml: "url: redis://a\n    timeout: 50", rule: "wrong-type", line: 5, at: "50", message: "bare number"),
        (yaml: "url: redis://a\n    token-key: \"not base64!\"", rule: "invalid-token-key", line: 5, at: "\"not", message: "is not base64; it must be 32 bytes in base64"),
        (yaml: "url: redis://a\n    token-key: \"c2hvcnQ=\"", rule: "invalid-token-key", line: 5, at: "\"c2h", message: "decodes to 5 bytes"),
        (yaml: "url: redis://a\n    password: \"${env:}\"", rule: "invalid-secret-reference", line: 5, at: "\"${", message: "empty reference"),
        (yaml: "url: redis://a\n    passwrd: \"${env:P}\"", rule: "unknown-key", line: 5, at: "passwrd", message: "unknown key 'passwrd' in coordination.redis"),
        (yaml: "key-prefix: \"app:\"", rule: "incomplete-coordination", line: 3, at: "redis", message: "coordination.redis has no 'url'"),
    ]

    @Test(arguments: badInputs)
    func aBadRedisValueIsReportedWhereItIs(_ bad: (yaml: String, rule: String, line: Int, at: String, message: String)) throws {
        let yaml = "version: 1\ncoordination:\n  redis:\n    \(bad.yaml)\n"
        let result = compile(yaml)
        #expect(result.graph == nil)
        let d = try #require(result.diagnostics.first { $0.severity == .error }, "\(result.diagnostics)")
        #expect(result.diagnostics.filter { $0.severity == .error }.count == 1, "one mistake, one error: \(result.diagnostics)")
        #expect(d.rule == bad.rule, "\(d)")
        #expect(d.message.contains(bad.message), "\(d.message)")
        #expect(d.location.line == bad.line)
        #expect(d.location.column == column(of: bad.at, inLine: bad.line, of: yaml), "\(d)")
    }

    @Test func aPasswordInTheURLIsNeverRepeated() throws {
        let result = compile("version: 1\ncoordination:\n  redis: { url: \"redis://app:hunter2@127.0.0.1:6379/0\" }\n")
        let d = try #require(result.rules("invalid-redis-url").first)
        #expect(!d.message.contains("hunter2") && d.suggestion?.contains("hunter2") != true)
        #expect(d.suggestion?.contains("password: \"${env:REDIS_PASSWORD}\"") == true, "it says where a password goes")
    }

    @Test(arguments: [
        ("on-unavailable: sometimes", "invalid-value", "sometimes", "is 'sometimes', not local, open or closed"),
        ("on-unavailable: lokal", "invalid-value", "lokal", "not local, open or closed"),
        ("on-unavailable: [local]", "wrong-type", "[local]", "must be local, open or closed"),
        ("redis: { url: \"redis://a\" }\n  retry: 3", "unknown-key", "retry", "unknown key 'retry' in coordination"),
    ])
    func aBadCoordinationValueIsReportedWhereItIs(_ body: String, _ rule: String, _ at: String, _ message: String) {
        let yaml = "version: 1\ncoordination:\n  \(body)\n" + (body.hasPrefix("redis") ? "" : "  redis: { url: \"redis://a\" }\n")
        expectOneDiagnostic(yaml, rule: rule, at: at, message: message)
    }

    @Test func aMisspeltModeGetsASuggestion() throws {
        let result = compile("version: 1\ncoordination:\n  redis: { url: \"redis://a\" }\n  on-unavailable: clsoed\n")
        #expect(result.diagnostics.first?.suggestion == "did you mean 'closed'?")
    }

    @Test func aSectionWithoutRedisIsIncompleteAtItsKey() throws {
        let result = compile("version: 1\ncoordination:\n  on-unavailable: local\n")
        #expect(result.summary == ["incomplete-coordination@2"])
        #expect(result.diagnostics.first?.location.column == 1)
        // A misspelt `redis` is one mistake: reported as the unknown key it is, not as a missing backend too.
        let typo = compile("version: 1\ncoordination:\n  rediss: { url: \"redis://a\" }\n")
        #expect(typo.summary == ["unknown-key@3"])
        #expect(typo.diagnostics.first?.suggestion == "did you mean 'redis'?")
        #expect(compile("version: 1\ncoordination: [redis]\n").summary == ["wrong-type@2"])
    }

    @Test func aSecondSectionInAnotherFileIsAnErrorPointingAtBoth() throws {
        let root = Fixtures.path("rules/duplicate-coordination.yaml")
        let result = PolicyCompiler().compile(file: root)
        let d = try #require(result.diagnostics.first)
        #expect(result.diagnostics.count == 1)
        #expect(d.rule == "duplicate-coordination")
        #expect(d.location == SourceLocation(file: root, line: 3, column: 1))
        let included = result.files[1]
        #expect(included.hasSuffix("includes/coordination.yaml"))
        #expect(d.message.contains("already declared at \(included):3:1"), "\(d.message)")
        #expect(result.graph == nil)
        // The included file alone is a policy with one backend.
        let alone = PolicyCompiler().compile(file: included)
        #expect(alone.diagnostics.isEmpty)
        #expect(alone.graph?.coordination?.redis.endpoint.host == "redis.internal")
    }

    @Test func aSectionInAnIncludedFileServesTheWholePolicy() throws {
        let dir = try makeTemporaryDirectory()
        try writeFile(dir + "/shared.yaml", "version: 1\ncoordination:\n  redis: { url: \"redis://10.0.0.5:7000/3\" }\n")
        try writeFile(dir + "/app.yaml", """
            version: 1
            include: [shared.yaml]
            services:
              a: { hosts: [a.example.com], rate-limit: { requests-per-second: 4, scope: fleet } }
            """)
        let result = PolicyCompiler().compile(file: dir + "/app.yaml")
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        let graph = try #require(result.graph)
        #expect(graph.coordination?.redis.endpoint.description == "redis://10.0.0.5:7000/3")
        #expect(graph.coordination?.definedAt.file == dir + "/shared.yaml")
        #expect(graph.route(for: "https://a.example.com/x")?.rateLimit?.scope == .fleet)
    }

    @Test func onUnavailableOpenIsAWarningAndTheOtherModesAreNot() throws {
        for mode in ["local", "closed"] {
            let result = compile("version: 1\ncoordination:\n  redis: { url: \"redis://a\" }\n  on-unavailable: \(mode)\n")
            #expect(result.diagnostics.isEmpty, "\(mode): \(result.diagnostics)")
        }
        let open = compile("version: 1\ncoordination:\n  redis: { url: \"redis://a\" }\n  on-unavailable: open\n")
        #expect(open.summary == ["coordination-fails-open@4"])
        #expect(open.diagnostics.first?.severity == .warning)
        #expect(open.diagnostics.first?.location.column == 19)
        #expect(open.graph?.coordination?.onUnavailable == .open, "a warning: the graph is built")
    }

    @Test func literalSecretsAreWarnedAboutAndReferencesAreNot() throws {
        let literal = compile("""
            version: 1
            coordination:
              redis:
                url: "redis://a"
                username: courier
                password: hunter2
                token-key: "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
            """)
        #expect(literal.summary == ["secret-literal@6", "secret-literal@7"], "a user name alone is not a secret")
        for d in literal.diagnostics {
            #expect(!d.message.contains("hunter2") && !d.message.contains("MDEy"), "the message never quotes the secret")
        }
        #expect(literal.rules("secret-literal").first?.suggestion?.contains("${env:REDIS_PASSWORD}") == true)
        #expect(literal.rules("secret-literal").last?.suggestion?.contains("${env:COURIER_TOKEN_KEY}") == true)
        let references = compile("""
            version: 1
            coordination:
              redis:
                url: "redis://a"
                username: "${env:REDIS_USER}"
                password: "${env:REDIS_PASSWORD}"
                token-key: "${file:/run/secrets/token-key}"
            """)
        #expect(references.diagnostics.isEmpty, "\(references.diagnostics)")
    }

    @Test func tlsRulesOnAPlainURLNeverApply() throws {
        let plain = compile("version: 1\ncoordination:\n  redis:\n    url: \"redis://a\"\n    tls: { min-version: \"1.3\" }\n")
        #expect(plain.summary == ["unreachable-rule@5"])
        #expect(plain.diagnostics.first?.location.column == 5)
        let secure = compile("version: 1\ncoordination:\n  redis:\n    url: \"rediss://a\"\n    tls: { min-version: \"1.3\" }\n")
        #expect(secure.diagnostics.isEmpty)
        #expect(secure.graph?.coordination?.redis.tls?.minVersion == .tls13)
        let badPin = compile("version: 1\ncoordination:\n  redis:\n    url: \"rediss://a\"\n    tls: { pins: [\"sha256/x\"] }\n")
        #expect(badPin.summary == ["invalid-pin@5"], "the same checks as a service's tls")
    }

    @Test func theDescriptionNeverPrintsASecret() throws {
        let graph = try #require(compile("""
            version: 1
            coordination:
              redis:
                url: "redis://127.0.0.1:6379/0"
                username: courier
                password: "hunter2"
                token-key: "${env:COURIER_TOKEN_KEY}"
            """).graph)
        let text = try #require(graph.coordination).description
        #expect(!text.contains("hunter2"))
        #expect(text.contains("password <redacted>"))
        #expect(text.contains("token-key ${env:COURIER_TOKEN_KEY}"))
        #expect(text.hasPrefix("redis://127.0.0.1:6379/0, username courier"))
        #expect(text.hasSuffix("; on-unavailable local"))
        // A literal around a reference is still a literal.
        let mixed = try RedisCoordination(url: "redis://a", password: PolicyString(segments: [.literal("pre-"), .secret(SecretReference(source: .env, name: "P"))]))
        #expect(mixed.description.contains("password <redacted>"))
        // A hand-built value with a password in its URL prints the endpoint, not the URL.
        let handBuilt = RedisCoordination(url: "redis://u:hunter2@h", endpoint: RedisEndpoint(host: "h"))
        #expect(!handBuilt.description.contains("hunter2"))
    }
}

/// The 1-based column of the first `text` on the 1-based `line` of `yaml`.
func column(of text: String, inLine line: Int, of yaml: String) -> Int? {
    let lines = yaml.split(separator: "\n", omittingEmptySubsequences: false)
    guard line >= 1, line - 1 < lines.count else { return nil }
    let characters = Array(lines[line - 1])
    let needle = Array(text)
    guard needle.count <= characters.count else { return nil }
    for start in 0...(characters.count - needle.count) where Array(characters[start..<start + needle.count]) == needle {
        return start + 1
    }
    return nil
}
