/// `coordination.redis`: the Redis (or Valkey) server a fleet shares its rate limits, `Retry-After` pauses and
/// OAuth tokens through, and how to log in.
///
/// Credentials stay secret references, as everywhere in the graph: the loader resolves them when it starts, the
/// compiler never does. ``description`` prints a reference as written (`${env:REDIS_PASSWORD}`) and a literal
/// password or token key as `<redacted>`.
public struct RedisCoordination: Hashable, Sendable, CustomStringConvertible {
    /// The URL as the policy wrote it: `redis://host[:port][/db]` or `rediss://…` (TLS). It holds no user or
    /// password (the compiler refuses one).
    public package(set) var url: String
    /// The ACL user (`AUTH username password`), or nil for the default user.
    public package(set) var username: PolicyString?
    /// The password, or nil when the server asks for none.
    public package(set) var password: PolicyString?
    /// What every key Courier writes starts with, so that several apps can share one server.
    public package(set) var keyPrefix: String
    /// How long one command may take before the loader treats the server as unavailable.
    public package(set) var timeout: Duration
    /// 32 bytes in base64 that encrypt shared tokens at rest (AES-256-GCM); required by `share-tokens: true`.
    public package(set) var tokenKey: PolicyString?
    /// TLS rules for `rediss://` (CA file, pins, minimum version, as services take them); nil: the defaults.
    public package(set) var tls: TLSPolicy?
    /// The URL's parts: host, port, database and whether it is TLS.
    package var endpoint: RedisEndpoint

    /// `courier:`.
    package static let defaultKeyPrefix = "courier:"
    /// 50 ms.
    package static let defaultTimeout = Duration.milliseconds(50)
    /// The longest `timeout` a policy may set: 10 s.
    package static let maxTimeout = Duration.seconds(10)

    package init(
        url: String, endpoint: RedisEndpoint, username: PolicyString? = nil, password: PolicyString? = nil,
        keyPrefix: String = RedisCoordination.defaultKeyPrefix, timeout: Duration = RedisCoordination.defaultTimeout,
        tokenKey: PolicyString? = nil, tls: TLSPolicy? = nil
    ) {
        self.url = url
        self.endpoint = endpoint
        self.username = username
        self.password = password
        self.keyPrefix = keyPrefix
        self.timeout = timeout
        self.tokenKey = tokenKey
        self.tls = tls
    }

    /// Parses `url` (``RedisEndpoint/parse(_:)``); for graphs built by hand.
    package init(
        url: String, username: PolicyString? = nil, password: PolicyString? = nil,
        keyPrefix: String = RedisCoordination.defaultKeyPrefix, timeout: Duration = RedisCoordination.defaultTimeout,
        tokenKey: PolicyString? = nil, tls: TLSPolicy? = nil
    ) throws(RedisEndpoint.Problem) {
        self.init(
            url: url, endpoint: try RedisEndpoint.parse(url).get(), username: username, password: password,
            keyPrefix: keyPrefix, timeout: timeout, tokenKey: tokenKey, tls: tls)
    }

    /// Whether `text` may be a key prefix: 1-64 printable ASCII characters, no space.
    package static func isValidKeyPrefix(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count) && text.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }

    /// `redis://host:port/db`, then what else is set, with no secret's value: a password or token key that holds
    /// any literal text prints as `<redacted>`, one made of references only as the references.
    public var description: String {
        var parts = [endpoint.description]
        if let username { parts.append("username \(username)") }
        if let password { parts.append("password \(Self.redacted(password))") }
        parts.append("key-prefix \(keyPrefix)")
        parts.append("timeout \(DurationFormat.format(timeout))")
        if let tokenKey { parts.append("token-key \(Self.redacted(tokenKey))") }
        if tls != nil { parts.append("tls rules") }
        return parts.joined(separator: ", ")
    }

    /// A secret as it may be printed: its references, or `<redacted>` when any part of it is literal text.
    package static func redacted(_ secret: PolicyString) -> String {
        let literal = secret.segments.contains { if case .literal(let s) = $0 { return !s.isEmpty } else { return false } }
        return literal ? "<redacted>" : secret.description
    }
}
