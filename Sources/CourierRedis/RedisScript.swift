internal import CourierCrypto

/// A Lua script: its source and the SHA-1 Redis names it by. ``RedisClient/evaluate(_:keys:arguments:deadline:)``
/// sends `EVALSHA` (the name only) and falls back to `EVAL` (the source, which also caches it) when the server
/// answers `NOSCRIPT`: its script cache is empty after a restart, a failover or `SCRIPT FLUSH`.
package struct RedisScript: Sendable, Equatable {
    package let source: String
    /// Lower-case hex, 40 characters.
    package let sha1: String

    package init(_ source: String) {
        self.source = source
        self.sha1 = SHA1.hexDigest(Array(source.utf8))
    }
}
