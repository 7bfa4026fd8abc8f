import CourierAuthorisers
import CourierCoordination
public import CourierCore
import CourierCrypto
import CourierRedis
import CourierTestSupport
public import CourierTransport
import Foundation

/// Token endpoints are reached over Courier's own transport, as the loader does.
extension HTTPClient: AuthoriserHTTPClient {
    public func send(method: HTTPMethod, url: HTTPURL, headers: HTTPHeaders, body: [UInt8]?) async throws -> (
        status: Int, headers: HTTPHeaders, body: [UInt8]
    ) {
        let response = try await execute(
            HTTPRequest(method: method, url: url, headers: headers, body: body.map { .bytes($0) } ?? .none, maxRedirects: 0)
        )
        return (response.status, response.headers, response.body)
    }
}

/// One instance of a fleet, as a separate process would have it: its own Redis client, token store, HTTP client
/// and authoriser (one plugin instance).
final class FleetMember: Sendable {
    let redis: RedisClient
    let http: HTTPClient
    let store: RedisTokenStore
    let authoriser: any Authoriser

    init(
        redisURL: String, tokenKey: [UInt8], plugin: any AuthoriserPlugin.Type, settings: [String: PolicyValue],
        fallback: TokenStoreFallback = .local, lease: Duration = .seconds(3), timeout: Duration = .seconds(10)
    ) throws {
        redis = RedisClient(configuration: RedisConfiguration(url: try RedisURL(redisURL), connectTimeout: .seconds(2), commandTimeout: .seconds(2)))
        http = HTTPClient()
        store = RedisTokenStore(client: redis, cipher: try AES256GCM(key: tokenKey), fallback: fallback, lease: lease)
        let context = AuthoriserContext(
            secrets: .system(environment: [:]), httpClient: http, clock: { Date().timeIntervalSince1970 }, sharedTokens: store
        )
        let instance = AuthoriserInstance(
            name: "fleet-auth", plugin: plugin.descriptor.type, settings: settings, timeout: timeout,
            definedAt: SourceLocation(file: "policy.yaml", line: 1, column: 1)
        )
        authoriser = try plugin.make(instance, context: context)
    }

    /// The `Authorization` header one request gets.
    func authorise() async throws -> String {
        var request = AuthorisationRequest(url: HTTPURL("https://api.example.com/v1/me")!)
        try await authoriser.authorise(&request)
        return request.headers["Authorization"] ?? ""
    }

    /// The server answered 401 to a request that carried `header`.
    func refused(_ header: String) async {
        var request = AuthorisationRequest(url: HTTPURL("https://api.example.com/v1/me")!)
        request.headers.replaceOrAdd(name: "Authorization", value: header)
        await authoriser.authorisationFailed(for: request)
    }

    func shutdown() {
        redis.shutdown()
        http.shutdown()
    }

    static func refreshSettings(_ server: RotatingTokenServer) -> [String: PolicyValue] {
        [
            "token-url": .string(PolicyString(literal: server.url())), "client-id": .string(PolicyString(literal: "fleet-app")),
            "refresh-token": .string(PolicyString(literal: server.initialRefreshToken)),
        ]
    }

    static func clientCredentialsSettings(_ server: RotatingTokenServer) -> [String: PolicyValue] {
        [
            "token-url": .string(PolicyString(literal: server.url())), "client-id": .string(PolicyString(literal: "fleet-svc")),
            "client-secret": .string(PolicyString(literal: "svc-secret")), "scope": .string(PolicyString(literal: "read")),
        ]
    }

    static func randomKey() -> [UInt8] { (0..<32).map { _ in UInt8.random(in: 0...255) } }
}

/// Every member authorises `calls` requests at once, all members together; the headers they got.
func authoriseEverywhere(_ fleet: [FleetMember], calls: Int, before: (@Sendable (FleetMember) async -> Void)? = nil) async throws -> [String] {
    try await withThrowingTaskGroup(of: String.self) { group in
        for member in fleet {
            for _ in 0..<calls {
                group.addTask {
                    await before?(member)
                    return try await member.authorise()
                }
            }
        }
        return try await group.reduce(into: []) { $0.append($1) }
    }
}

/// Every key in the Redis behind `client` with every value it holds, read by type (SCAN, then GET, HGETALL,
/// ZRANGE, LRANGE or SMEMBERS): the bytes of each key's name and of its values.
func everyKeyAndValue(_ client: RedisClient) async throws -> [(key: String, values: [[UInt8]])] {
    var cursor = "0"
    var keys: [String] = []
    repeat {
        let reply = try await client.send(RedisCommand("SCAN", cursor, "COUNT", "100"))
        guard let parts = reply.elements, parts.count == 2, let next = parts[0].string, let found = parts[1].elements else {
            throw RedisError(.protocolViolation, "unexpected SCAN reply", backend: client.backend)
        }
        cursor = next
        keys += found.compactMap(\.string)
    } while cursor != "0"
    var out: [(key: String, values: [[UInt8]])] = []
    for key in keys {
        let type = try await client.send(RedisCommand("TYPE", key)).string ?? ""
        let command: RedisCommand
        switch type {
        case "string": command = RedisCommand("GET", key)
        case "hash": command = RedisCommand("HGETALL", key)
        case "zset": command = RedisCommand("ZRANGE", key, "0", "-1", "WITHSCORES")
        case "list": command = RedisCommand("LRANGE", key, "0", "-1")
        case "set": command = RedisCommand("SMEMBERS", key)
        default: throw RedisError(.protocolViolation, "key \(key) has type \(type), which the scan does not read", backend: client.backend)
        }
        let reply = try await client.send(command)
        out.append((key, reply.elements.map { $0.compactMap(\.bytes) } ?? [reply.bytes].compactMap { $0 }))
    }
    return out
}

extension Array where Element == UInt8 {
    func contains(text: String) -> Bool {
        let needle = Array(text.utf8)
        guard !needle.isEmpty, needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { self[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
