package import CourierCore
internal import CourierCrypto

/// Every key the fleet writes in Redis, under the policy's `key-prefix` (default `courier:`).
///
/// | key | type | what | expiry |
/// | --- | --- | --- | --- |
/// | `<prefix>rl:{<endpoint key>}:<settings>` | hash (`tat`, `paused`) | one fleet rate limit's theoretical arrival time and Retry-After pause | when both are in the past |
/// | `<prefix>instances` | sorted set | live instances, scored by when their heartbeat lapses | members removed when they lapse |
/// | `<prefix>token:{<identity>}` | string | a shared OAuth token record, AES-256-GCM encrypted | the token's lifetime |
/// | `<prefix>token:{<identity>}:lock` | string | the fleet's one refresh in flight (a random owner) | the lock's lease |
///
/// `<settings>` is a hash of the limit's rate and burst, so a policy change starts a fresh key instead of
/// inheriting a schedule computed for other numbers. `<identity>` is a hash of the token URL, client id and
/// scope, so the key names no secret. The braces are Redis Cluster hash tags: a token's record and its lock
/// land on one shard, and each script touches keys of one tag only.
package struct FleetKeys: Sendable, Hashable {
    package let prefix: String

    package init(prefix: String = "courier:") {
        self.prefix = prefix
    }

    /// The state of a fleet rate limit for one endpoint key.
    package func rateLimit(endpointKey: String, limit: RateLimit) -> String {
        "\(prefix)rl:{\(endpointKey)}:\(Self.settingsHash(limit))"
    }

    /// The pattern that matches every rate-limit key (for `courier fleet status`).
    package var rateLimitPattern: String { "\(prefix)rl:*" }

    /// The sorted set of live instances.
    package var instances: String { "\(prefix)instances" }

    /// A shared token record; `identity` is what the authoriser says makes two tokens the same (token URL,
    /// client id, scope), hashed here.
    package func token(identity: String) -> String {
        "\(prefix)token:{\(Self.digest(identity))}"
    }

    /// The refresh lock of ``token(identity:)``, on the same shard.
    package func tokenLock(identity: String) -> String {
        token(identity: identity) + ":lock"
    }

    /// 12 hex digits of SHA-256 over the limit's numbers as the policy gave them.
    static func settingsHash(_ limit: RateLimit) -> String {
        String(digest("\(limit.requestsPerSecond)|\(limit.burst)").prefix(12))
    }

    private static func digest(_ text: String) -> String {
        SHA256.hex(SHA256.hash(Array(text.utf8)))
    }
}
