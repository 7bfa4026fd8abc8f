@testable import CourierAuthorisers
import CourierCore
import CourierTestSupport
import CourierTransport
import Foundation
import Synchronization
import Testing

/// A shared store in memory, single process: `obtain` reads, and otherwise refreshes and writes, without a lock
/// (the lock's behaviour is RedisTokenStore's, tested against Redis in CourierCoordinationTests). It counts what
/// the plugin asked of it.
private final class MemoryTokenStore: SharedTokenStore {
    let records = Mutex<[String: [UInt8]]>([:])
    let waits = Mutex<[Duration]>([])

    func read(identity: String) async throws -> [UInt8]? { records.withLock { $0[identity] } }

    func obtain(
        identity: String, waitingAtMost maximumWait: Duration, isUsable: @Sendable ([UInt8]) -> Bool,
        refresh: @Sendable ([UInt8]?) async throws -> SharedTokenRecord
    ) async throws -> [UInt8] {
        waits.withLock { $0.append(maximumWait) }
        let stored = records.withLock { $0[identity] }
        if let stored, isUsable(stored) { return stored }
        let fresh = try await refresh(stored)
        records.withLock { $0[identity] = fresh.bytes }
        return fresh.bytes
    }

    var identities: [String] { records.withLock { Array($0.keys) } }
}

/// The OAuth 2 plugins with a shared store in their context.
@Suite(.timeLimit(.minutes(1))) struct SharedTokenPluginTests {
    private func settings(_ server: RecordingServer) -> [String: PolicyValue] {
        ["token-url": str(server.url("/token")), "client-id": str("app"), "refresh-token": str("rt-0")]
    }

    private func authorised(_ authoriser: any Authoriser) async throws -> String? {
        var request = AuthorisationRequest(url: HTTPURL("https://api.example.com/v1/me")!)
        try await authoriser.authorise(&request)
        return request.headers["Authorization"]
    }

    /// The stored refresh token is the one presented, and the rotated one is stored; the record is the grant's
    /// JSON, and the store is asked to wait at most the authoriser's timeout.
    @Test func refreshUsesAndStoresTheFleetsRefreshToken() async throws {
        let server = try RecordingServer { i, _ in
            .json(200, #"{"access_token":"at-\#(i)","expires_in":3600,"refresh_token":"rt-\#(i + 10)"}"#)
        }
        defer { server.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let store = MemoryTokenStore()
        var instance = makeInstance("oauth2-refresh", settings(server))
        instance.timeout = .seconds(7)
        let context = AuthoriserContext(
            secrets: .system(environment: [:]), httpClient: TransportAuthoriserClient(client: client), clock: ManualClock().read,
            sharedTokens: store
        )
        // Another instance already rotated the policy's token: the record holds rt-5.
        let identity = try await identityFor(instance)
        store.records.withLock {
            $0[identity] = SharedGrant(token: AccessToken(value: "stale", expiresAt: 0), refreshToken: "rt-5").encoded
        }
        let authoriser = try OAuth2RefreshPlugin.make(instance, context: context)
        #expect(try await authorised(authoriser) == "Bearer at-0")
        #expect(server.requests.last?.bodyText.contains("refresh_token=rt-5&") == true)
        let bytes = try #require(store.records.withLock { $0[identity] })
        let stored = try #require(SharedGrant(decoding: bytes))
        #expect(stored.token.value == "at-0" && stored.refreshToken == "rt-10")
        #expect(store.waits.withLock { $0 }.allSatisfy { $0 == .seconds(7) })
    }

    /// `invalid_grant`: another instance refreshed meanwhile and stored its result; the plugin reads the store
    /// once more and uses that instead of failing.
    @Test func invalidGrantReadsTheStoreBeforeFailing() async throws {
        let store = MemoryTokenStore()
        let identity = Mutex<String?>(nil)
        let server = try RecordingServer { _, _ in
            // While this request is in flight another instance stores a good token (once the test says so).
            if let identity = identity.withLock({ $0 }) {
                store.records.withLock {
                    $0[identity] = SharedGrant(token: AccessToken(value: "from-another", expiresAt: 1_800_003_600), refreshToken: "rt-9").encoded
                }
            }
            return .json(400, #"{"error":"invalid_grant"}"#)
        }
        defer { server.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        let instance = makeInstance("oauth2-refresh", settings(server))
        let context = AuthoriserContext(
            secrets: .system(environment: [:]), httpClient: TransportAuthoriserClient(client: client), clock: ManualClock().read,
            sharedTokens: store
        )
        let authoriser = try OAuth2RefreshPlugin.make(instance, context: context)
        // Without a record written meanwhile, invalid_grant is the error, and nothing is stored.
        await #expect {
            _ = try await authorised(authoriser)
        } throws: { ($0 as? AuthoriserError)?.description.contains("invalid_grant") == true }
        #expect(store.identities.isEmpty)
        let shared = try await identityFor(instance)
        identity.withLock { $0 = shared }
        #expect(try await authorised(authoriser) == "Bearer from-another")
    }

    /// The identity depends on the token URL, client, scope and the configured refresh token (two users of one
    /// client do not share), never in clear in the record's key (the store hashes it); client credentials differ
    /// by grant.
    @Test func identitiesSeparateUsersAndGrants() async throws {
        let a = try await identityFor(makeInstance("oauth2-refresh", ["token-url": str("https://a/t"), "client-id": str("c"), "refresh-token": str("user-1")]))
        let b = try await identityFor(makeInstance("oauth2-refresh", ["token-url": str("https://a/t"), "client-id": str("c"), "refresh-token": str("user-2")]))
        let c = try await identityFor(makeInstance("oauth2-client-credentials", ["token-url": str("https://a/t"), "client-id": str("c"), "client-secret": str("s")]))
        #expect(Set([a, b, c]).count == 3)
        #expect(!a.contains("user-1") && !b.contains("user-2"))
    }

    /// The identity a plugin instance uses, learnt by letting it ask a store that records it.
    private func identityFor(_ instance: AuthoriserInstance) async throws -> String {
        let spy = IdentitySpy()
        let context = AuthoriserContext(secrets: .system(environment: [:]), httpClient: Unreachable(), clock: { 0 }, sharedTokens: spy)
        let plugin: any AuthoriserPlugin.Type = instance.plugin == "oauth2-refresh" ? OAuth2RefreshPlugin.self : OAuth2ClientCredentialsPlugin.self
        _ = try? await authorised(try plugin.make(instance, context: context))
        return try #require(spy.identity.withLock { $0 })
    }
}

/// Records the identity asked for and refuses.
private final class IdentitySpy: SharedTokenStore {
    let identity = Mutex<String?>(nil)
    func read(identity: String) async throws -> [UInt8]? { nil }
    func obtain(
        identity: String, waitingAtMost: Duration, isUsable: @Sendable ([UInt8]) -> Bool,
        refresh: @Sendable ([UInt8]?) async throws -> SharedTokenRecord
    ) async throws -> [UInt8] {
        self.identity.withLock { $0 = identity }
        throw CancellationError()
    }
}
