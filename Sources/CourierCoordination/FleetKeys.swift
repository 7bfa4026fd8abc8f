package import CourierCore
internal import CourierCrypto

/// Every key the fleet writes in Redis, under the policy's `key-prefix` (default `courier:`).
///
/// | key | type | what | expiry |
/// | --- | --- | --- | --- |
/// | `<prefix>rl:{<endpoint key>}:<settings>` | hash (`tat`, `paused`, `interval`, `burst`) | one fleet rate limit's theoretical arrival time and Retry-After pause (Redis time, microseconds), and its emission interval (microseconds) and burst for the status reader | when both `tat` and `paused` are in the past |
/// | `<prefix>instances` | sorted set | live instances, scored by when their heartbeat lapses (Redis time, microseconds) | members removed when they lapse; the set when its last member does |
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

    /// The `SCAN MATCH` pattern of every rate-limit key (for `courier fleet status`): the prefix with its glob
    /// characters (`*`, `?`, `[`, `]`, `\`) escaped, so a prefix such as `app[1]:` matches only itself.
    package var rateLimitPattern: String {
        var escaped = ""
        for character in prefix {
            if "*?[]\\".contains(character) { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped + "rl:*"
    }

    /// The endpoint key and settings hash a ``rateLimit(endpointKey:limit:)`` key was made of; nil for a key that
    /// is not one (another prefix, or a name that does not end in `}:` and 12 hex digits).
    package func parseRateLimit(_ key: String) -> (endpointKey: String, settings: String)? {
        let head = "\(prefix)rl:{"
        guard key.hasPrefix(head) else { return nil }
        let rest = key.dropFirst(head.count)
        let settings = rest.suffix(12)
        guard rest.count >= 14, settings.allSatisfy({ "0123456789abcdef".contains($0) }), rest.dropLast(12).hasSuffix("}:") else { return nil }
        return (String(rest.dropLast(14)), String(settings))
    }

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
