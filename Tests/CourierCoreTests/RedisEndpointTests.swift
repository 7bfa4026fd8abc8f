import CourierCore
import Testing

/// `coordination.redis.url` taken apart: what is accepted, with its defaults, and what is refused.
@Suite struct RedisEndpointTests {
    @Test(arguments: [
        ("redis://127.0.0.1", RedisEndpoint(host: "127.0.0.1", port: 6379, database: 0, usesTLS: false)),
        ("redis://localhost:6380", RedisEndpoint(host: "localhost", port: 6380, database: 0, usesTLS: false)),
        ("redis://Cache.Example.com:7000/3", RedisEndpoint(host: "cache.example.com", port: 7000, database: 3, usesTLS: false)),
        ("rediss://cache.example.com/15", RedisEndpoint(host: "cache.example.com", port: 6379, database: 15, usesTLS: true)),
        ("redis://h/", RedisEndpoint(host: "h", port: 6379, database: 0, usesTLS: false)),
        ("redis://h:1/0", RedisEndpoint(host: "h", port: 1, database: 0, usesTLS: false)),
        ("redis://h:65535/16", RedisEndpoint(host: "h", port: 65535, database: 16, usesTLS: false)),
        ("redis://[::1]", RedisEndpoint(host: "::1", port: 6379, database: 0, usesTLS: false)),
        ("rediss://[2001:db8::7]:6380/1", RedisEndpoint(host: "2001:db8::7", port: 6380, database: 1, usesTLS: true)),
    ])
    func accepted(_ url: String, _ expected: RedisEndpoint) throws {
        let endpoint = try RedisEndpoint.parse(url).get()
        #expect(endpoint == expected)
    }

    @Test func theDescriptionIsTheURLWithoutWhatThePolicyLeftOut() throws {
        #expect(try RedisEndpoint.parse("redis://h").get().description == "redis://h:6379/0")
        #expect(try RedisEndpoint.parse("rediss://[::1]:7000/2").get().description == "rediss://[::1]:7000/2")
        #expect(try RedisEndpoint.parse("rediss://[::1]:7000/2").get().address == "[::1]:7000/2")
    }

    @Test(arguments: [
        "", "127.0.0.1:6379", "http://h", "REDIS://h", "redis:/h", "redis://", "redis:///1", "redis://:pw@h",
        "redis://u:pw@h", "redis://u@h", "redis://h:0", "redis://h:65536", "redis://h:x", "redis://h:", "redis://h:+1",
        "redis://h/-1", "redis://h/+1", "redis://h/1x", "redis://h/99999999999999999999999", "redis://h?db=1",
        "redis://h#x", "redis://::1", "redis://[::1", "redis://[::1]x", "redis://[h]", "redis://h h", "redis://*.h",
        "redis://h/0/1",
    ])
    func refused(_ url: String) {
        #expect(throws: RedisEndpoint.Problem.self) { try RedisEndpoint.parse(url).get() }
    }

    @Test func aCredentialInTheURLIsNeverRepeated() {
        for url in ["redis://:hunter2@h", "redis://app:hunter2@h:6379/0", "redis://hunter2@h"] {
            guard case .failure(let problem) = RedisEndpoint.parse(url) else {
                Issue.record("\(url) was accepted")
                continue
            }
            #expect(!problem.reason.contains("hunter2") && problem.suggestion?.contains("hunter2") != true)
        }
    }

    @Test func keyPrefixes() {
        for good in ["courier:", "a", "app:v2:", String(repeating: "k", count: 64), "~!{}"] {
            #expect(RedisCoordination.isValidKeyPrefix(good), "\(good)")
        }
        for bad in ["", "with space", String(repeating: "k", count: 65), "tab\t", "cöurier", "new\nline"] {
            #expect(!RedisCoordination.isValidKeyPrefix(bad), "\(bad)")
        }
    }
}
