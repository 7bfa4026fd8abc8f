import CourierCoordination
import CourierCore
import CourierCrypto
import CourierRedis
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// The store on its own against a real redis-server: the lock, its lease and renewal, the wait's bound, and
/// records that do not open.
@Suite(.serialized, .timeLimit(.minutes(1))) struct RedisTokenStoreTests {
    private static func client(_ server: RedisServer) throws -> RedisClient {
        RedisClient(configuration: RedisConfiguration(url: try RedisURL(server.url()), connectTimeout: .seconds(2), commandTimeout: .seconds(2)))
    }

    private static func store(
        _ client: RedisClient, key: [UInt8] = Array(repeating: 9, count: 32), lease: Duration = .seconds(3),
        outcomes: OutcomeLog? = nil
    ) throws -> RedisTokenStore {
        RedisTokenStore(client: client, cipher: try AES256GCM(key: key), lease: lease, observe: { outcomes?.append($0) })
    }

    /// What a store reported for each token it returned.
    final class OutcomeLog: Sendable {
        private let list = Mutex<[SharedTokenOutcome]>([])
        func append(_ outcome: SharedTokenOutcome) { list.withLock { $0.append(outcome) } }
        var all: [SharedTokenOutcome] { list.withLock { $0 } }
    }

    private func record(_ text: String) -> SharedTokenRecord { SharedTokenRecord(bytes: Array(text.utf8), keepFor: .seconds(60)) }

    @Test func theHolderWritesTheRecordSealedWithItsExpiryAndReleasesTheLock() async throws {
        let server = try await RedisServer.start()
        let client = try Self.client(server)
        defer { withExtendedLifetime(server) { client.shutdown() } }
        let outcomes = OutcomeLog()
        let store = try Self.store(client, outcomes: outcomes)
        let bytes = try await store.obtain(identity: "id", waitingAtMost: .seconds(5), isUsable: { _ in true }) { stored in
            #expect(stored == nil)
            return record("token-1")
        }
        #expect(bytes == Array("token-1".utf8))
        #expect(try await store.read(identity: "id") == Array("token-1".utf8))
        let keys = FleetKeys()
        let ttl = try await client.send(RedisCommand("PTTL", keys.token(identity: "id"))).integer ?? -1
        #expect(ttl > 50_000 && ttl <= 60_000)
        #expect(try await client.send(RedisCommand("EXISTS", keys.tokenLock(identity: "id"))) == .integer(0))
        // Usable: returned without a refresh. Not usable: refreshed with the stored record.
        let again = try await store.obtain(identity: "id", waitingAtMost: .seconds(5), isUsable: { _ in true }) { _ in
            Issue.record("refreshed a usable record")
            return record("x")
        }
        #expect(again == Array("token-1".utf8))
        let next = try await store.obtain(identity: "id", waitingAtMost: .seconds(5), isUsable: { $0 != Array("token-1".utf8) }) { stored in
            #expect(stored == Array("token-1".utf8))
            return record("token-2")
        }
        #expect(next == Array("token-2".utf8))
        // What each call reported for the metrics: refreshed, reused, refreshed.
        #expect(outcomes.all == [.refreshed, .reused, .refreshed])
    }

    /// A holder that died leaves its lock until the lease lapses; a waiter then takes it over and refreshes once.
    @Test func aLockWhoseHolderDiedIsTakenOverAfterItsLease() async throws {
        let server = try await RedisServer.start()
        let client = try Self.client(server)
        defer { withExtendedLifetime(server) { client.shutdown() } }
        let store = try Self.store(client)
        let lockKey = FleetKeys().tokenLock(identity: "id")
        #expect(try await client.send(RedisCommand("SET", lockKey, "a-dead-owner", "NX", "PX", "700")) == .simpleString("OK"))
        let started = Deadline.now()
        let refreshedAt = Mutex<Deadline?>(nil)
        let bytes = try await store.obtain(identity: "id", waitingAtMost: .seconds(10), isUsable: { _ in false }) { _ in
            refreshedAt.withLock { $0 = .now() }
            // The dead owner's lock is gone, and this instance holds one of its own.
            let owner = try await client.send(RedisCommand("GET", lockKey)).string
            #expect(owner != nil && owner != "a-dead-owner")
            return record("taken-over")
        }
        #expect(bytes == Array("taken-over".utf8))
        let at = try #require(refreshedAt.withLock { $0 })
        #expect(at - started >= .milliseconds(650))  // not before the lease lapsed (PX 700, a little clock slack)
    }

    /// A refresh slower than the lease keeps the lock (renewed every third of it): a second instance waits for
    /// the record instead of refreshing too.
    @Test func aSlowRefreshKeepsTheLockByRenewingItsLease() async throws {
        let server = try await RedisServer.start()
        let (clientA, clientB) = (try Self.client(server), try Self.client(server))
        defer { withExtendedLifetime(server) { clientA.shutdown(); clientB.shutdown() } }
        let outcomesB = OutcomeLog()
        let (a, b) = (try Self.store(clientA, lease: .milliseconds(300)), try Self.store(clientB, lease: .milliseconds(300), outcomes: outcomesB))
        let refreshes = Atomic<Int>(0)
        let slow = Task {
            try await a.obtain(identity: "id", waitingAtMost: .seconds(10), isUsable: { !$0.isEmpty }) { _ in
                refreshes.add(1, ordering: .relaxed)
                try await Task.sleep(for: .milliseconds(1200))
                return record("slow")
            }
        }
        // B starts once A holds the lock.
        for _ in 0..<200 where try await clientB.send(RedisCommand("EXISTS", FleetKeys().tokenLock(identity: "id"))) == .integer(0) {
            try await Task.sleep(for: .milliseconds(5))
        }
        let fromB = try await b.obtain(identity: "id", waitingAtMost: .seconds(10), isUsable: { !$0.isEmpty }) { _ in
            refreshes.add(1, ordering: .relaxed)
            return record("second")
        }
        #expect(try await slow.value == Array("slow".utf8))
        #expect(fromB == Array("slow".utf8))
        #expect(refreshes.load(ordering: .relaxed) == 1)
        #expect(outcomesB.all == [.waited])
    }

    @Test func aWaiterGivesUpWithATypedErrorAndNeverRefreshes() async throws {
        let server = try await RedisServer.start()
        let client = try Self.client(server)
        defer { withExtendedLifetime(server) { client.shutdown() } }
        _ = try await client.send(RedisCommand("SET", FleetKeys().tokenLock(identity: "id"), "someone-else", "PX", "20000"))
        await #expect {
            _ = try await Self.store(client).obtain(identity: "id", waitingAtMost: .milliseconds(300), isUsable: { _ in false }) { _ in
                Issue.record("refreshed while another instance held the lock")
                return record("x")
            }
        } throws: { ($0 as? AuthoriserError)?.kind == .sharedTokenWaitTimedOut }
        // The other instance's lock is untouched.
        #expect(try await client.send(RedisCommand("GET", FleetKeys().tokenLock(identity: "id"))).string == "someone-else")
    }

    /// The record's key is its associated data: a record copied under another identity's key does not open, nor
    /// does one sealed with another key; both are the same clear error.
    @Test func recordsOpenOnlyUnderTheirOwnKeyAndWithTheFleetsTokenKey() async throws {
        let server = try await RedisServer.start()
        let client = try Self.client(server)
        defer { withExtendedLifetime(server) { client.shutdown() } }
        let store = try Self.store(client)
        _ = try await store.obtain(identity: "a", waitingAtMost: .seconds(5), isUsable: { _ in true }) { _ in record("secret-a") }
        let keys = FleetKeys()
        let sealed = try #require(try await client.send(RedisCommand("GET", keys.token(identity: "a"))).bytes)
        _ = try await client.send(RedisCommand("SET", arguments: [Array(keys.token(identity: "b").utf8), sealed]))
        await #expect {
            _ = try await store.read(identity: "b")
        } throws: { ($0 as? AuthoriserError)?.kind == .sharedTokenUnreadable }
        let stranger = try Self.store(client, key: Array(repeating: 1, count: 32))
        await #expect {
            _ = try await stranger.read(identity: "a")
        } throws: { error in
            let e = error as? AuthoriserError
            return e?.kind == .sharedTokenUnreadable && e?.cause is AES256GCMError && e?.description.contains("secret-a") == false
        }
        #expect(try await store.read(identity: "a") == Array("secret-a".utf8))
        #expect(try await store.read(identity: "missing") == nil)
    }
}
