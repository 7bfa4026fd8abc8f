internal import CourierCore
internal import CourierRedis

/// The fleet's refresh lock for one shared token record: `SET <lock> <owner> NX PX <lease>`, with a random 128-bit
/// owner per attempt. Only the owner renews it (compare-and-`PEXPIRE`) or releases it (compare-and-`DEL`), each one
/// Lua script so that the compare and the change are one step; a holder that dies loses it when the lease lapses.
struct RedisTokenLock: Sendable {
    static let releaseScript = RedisScript(
        "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
    )
    static let renewScript = RedisScript(
        "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0"
    )

    let client: RedisClient
    let key: String
    let lease: Duration
    /// 32 hex digits, fresh for every attempt.
    let owner: String

    init(client: RedisClient, key: String, lease: Duration) {
        self.client = client
        self.key = key
        self.lease = lease
        var random = SystemRandomNumberGenerator()
        owner = [random.next(), random.next()].map { (word: UInt64) in
            let digits = String(word, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }.joined()
    }

    /// True when this owner now holds the lock; false when another does.
    func acquire() async throws(RedisError) -> Bool {
        let reply = try await client.send(RedisCommand("SET", key, owner, "NX", "PX", leaseMilliseconds))
        return reply != .null
    }

    /// Releases the lock if this owner still holds it. A failure is left to the lease.
    func release() async {
        _ = try? await client.evaluate(Self.releaseScript, keys: [key], arguments: [Array(owner.utf8)])
    }

    /// Runs `body` while holding the lock, renewing its lease every third of it, so that a refresh slower than the
    /// lease keeps the lock while a holder that dies still loses it within one lease.
    func renewing<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        let renewal = Task { [self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: lease / 3)
                if Task.isCancelled { return }
                _ = try? await client.evaluate(Self.renewScript, keys: [key], arguments: [Array(owner.utf8), Array(leaseMilliseconds.utf8)])
            }
        }
        defer { renewal.cancel() }
        return try await body()
    }

    private var leaseMilliseconds: String { String(max(1, lease.nanosecondsClamped / 1_000_000)) }
}
