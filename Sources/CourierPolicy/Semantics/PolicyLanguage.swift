/// The policy language's key tables: every mapping, its keys, each key's value shape, default and summary.
///
/// The compiler checks keys against these tables (unknown keys, did-you-mean suggestions) and
/// ``PolicySchema`` generates the JSON Schema from them, so the two cannot drift. A test compiles a file that
/// uses every key of every table.
enum PolicyLanguage {
    /// What a value looks like.
    indirect enum Shape: Sendable {
        case integer(minimum: Int, maximum: Int?)
        /// A number; `exclusiveMinimum` when zero is not allowed.
        case number(minimum: Double, exclusiveMinimum: Bool, maximum: Double?)
        case boolean
        case string
        case duration
        /// A duration or `none` (no cap).
        case durationOrNone
        case size
        case choice([String])
        case hostPattern
        case hostAddress
        case headerName
        case pin
        /// `redis://host[:port][/db]` or `rediss://…`.
        case redisURL
        /// 1-64 printable ASCII characters without a space.
        case keyPrefix
        case retryCondition
        case method
        case list(Shape)
        /// One item or a list of them.
        case oneOrList(Shape)
        case mapping(Table)
        /// A mapping, or `off` to switch the feature off (and drop inherited values).
        case mappingOrOff(Table)
        /// Free keys (names, hosts, paths) mapping to one shape; `keyShape` checks the keys.
        case dictionary(keyShape: Shape?, value: Shape)
        /// Authoriser settings, typed by the sibling `plugin`.
        case settings
    }

    struct Key: Sendable {
        var name: String
        var shape: Shape
        var summary: String
        /// The default when absent, as written in a policy (nil: no default / required / not applicable).
        var defaultText: String?

        init(_ name: String, _ shape: Shape, _ summary: String, default defaultText: String? = nil) {
            self.name = name
            self.shape = shape
            self.summary = summary
            self.defaultText = defaultText
        }
    }

    struct Table: Sendable {
        /// A name for messages ("retry", "a service").
        var name: String
        var keys: [Key]
        /// Keys that must be present.
        var required: [String] = []

        func key(_ name: String) -> Key? { keys.first { $0.name == name } }
        var keyNames: [String] { keys.map(\.name) }
    }

    static let positive = Shape.number(minimum: 0, exclusiveMinimum: true, maximum: nil)

    static let timeouts = Table(name: "timeouts", keys: [
        Key("connect", .duration, "Time allowed to connect (DNS, TCP and TLS), per attempt.", default: "10s"),
        Key("idle", .duration, "Longest silence while waiting for response bytes.", default: "30s"),
        Key("total", .duration, "Deadline for the whole request, retries and back-off included.", default: "60s"),
    ])

    static let backoff = Table(name: "retry.backoff", keys: [
        Key("initial", .duration, "Delay before the first retry.", default: "500ms"),
        Key("max", .durationOrNone, "Cap on one delay; `none` means uncapped (warned about).", default: "30s"),
        Key("multiplier", .number(minimum: 1, exclusiveMinimum: false, maximum: nil), "Growth factor per retry (at least 1).", default: "2"),
        Key("jitter", .choice(["none", "full", "equal", "decorrelated"]), "How each delay is randomised.", default: "full"),
    ])

    static let budget = Table(name: "retry.budget", keys: [
        Key("ratio", .number(minimum: 0, exclusiveMinimum: false, maximum: 1), "Retries allowed as a share of first attempts (0 to 1).", default: "0.2"),
        Key("min-per-second", .number(minimum: 0, exclusiveMinimum: false, maximum: nil), "Retries per second always allowed, so a quiet client can still retry.", default: "10"),
    ])

    static let retry = Table(name: "retry", keys: [
        Key("max-attempts", .integer(minimum: 1, maximum: 100), "Total attempts, the first included (1 = no retries; at most 100).", default: "3"),
        Key("on", .list(.retryCondition), "What is retried: connect-error, timeout, connection-lost and status codes.", default: "[connect-error, timeout, 429, 502, 503, 504]"),
        Key("methods", .list(.method), "Methods that may be retried.", default: "[GET, HEAD, PUT, DELETE, OPTIONS]"),
        Key("backoff", .mapping(backoff), "The delay curve between attempts."),
        Key("respect-retry-after", .boolean, "Whether a Retry-After header sets the next delay (when longer).", default: "true"),
        Key("retry-after-cap", .duration, "The longest Retry-After honoured.", default: "5m"),
        Key("budget", .mappingOrOff(budget), "Retry budget against retry storms; `off` disables it."),
        Key("idempotency-key", .headerName, "A header sent with one value on every attempt; lets non-idempotent methods in `methods` be retried."),
    ])

    static let scope = Shape.choice(["process", "fleet"])

    static let endpointLimit = Table(name: "an endpoint limit", keys: [
        Key("requests-per-second", positive, "Requests per second for this prefix (required)."),
        Key("burst", .integer(minimum: 1, maximum: nil), "Bucket capacity.", default: "max(1, ceil(requests-per-second))"),
        Key("scope", scope, "Who shares this prefix's bucket: each process, or the whole fleet through `coordination`.", default: "the scope of the service's rate-limit"),
    ])

    static let rateLimit = Table(name: "rate-limit", keys: [
        Key("requests-per-second", positive, "Requests per second per endpoint key (host + first path component); absent = unlimited."),
        Key("burst", .integer(minimum: 1, maximum: nil), "Bucket capacity: requests that may go at once after a quiet period.", default: "max(1, ceil(requests-per-second))"),
        Key("endpoints", .dictionary(keyShape: nil, value: .mapping(endpointLimit)), "Overrides by path prefix (each starting with '/'); the longest matching prefix wins."),
        Key("scope", scope, "Who shares each bucket: each process on its own, or the whole fleet through `coordination`.", default: "process"),
    ])

    static let defaults = Table(name: "defaults", keys: [
        Key("timeouts", .mapping(timeouts), "Default timeouts."),
        Key("retry", .mapping(retry), "Default retry curve."),
        Key("rate-limit", .mappingOrOff(rateLimit), "Default rate limit per endpoint key; `off` = unlimited."),
        Key("propagate-trace-context", .boolean, "What services start from for `propagate-trace-context` (hosts no service claims never receive trace context).", default: "true"),
        Key("tls", .mapping(tls), "TLS rules every service starts from, merged key by key (hosts no service claims use the built-in TLS settings and present no client certificate)."),
        Key("proxy", .mappingOrOff(proxy), "The proxy every service (and every host no service claims) goes through unless its own `proxy:` says otherwise; `off` = direct, whatever the environment says."),
    ])

    static let tls = Table(name: "tls", keys: [
        Key("pins", .list(.pin), "SPKI pins `sha256/<base64>`; the handshake fails unless one matches. Give a backup pin."),
        Key("ca-file", .string, "PEM bundle of trusted CAs replacing the system store, relative to this file."),
        Key("min-version", .choice(["1.2", "1.3"]), "Lowest TLS version accepted.", default: "\"1.2\""),
        Key("client-certificate", .string, "PEM client certificate (then any intermediates) presented when a server asks for one (mutual TLS), relative to this file."),
        Key("client-key", .string, "PEM private key of the client certificate, relative to this file; keep it readable by its owner only.", default: "the client-certificate file"),
        Key("client-key-password", .string, "Password of an encrypted client-key; a secret: write ${env:NAME} or ${file:path}."),
    ])

    static let proxy = Table(name: "proxy", keys: [
        Key("url", .string, "The proxy: http://host[:port] (CONNECT for https), https:// (TLS to the proxy), socks5:// or socks5h:// (the proxy resolves names); the port defaults to 1080 (443 for https://)."),
        Key("username", .string, "The proxy's user (Basic for an HTTP proxy, RFC 1929 for SOCKS5); may embed ${env:NAME}."),
        Key("password", .string, "The proxy's password; a secret: write ${env:NAME} or ${file:path}."),
        Key("no-proxy", .oneOrList(.string), "Hosts reached directly: names (and the names under them), IP addresses, CIDR ranges, host:port, or `*`."),
        Key("ca-file", .string, "PEM bundle of the CAs that verify an https:// proxy's own certificate, relative to this file."),
    ])

    static let cache = Table(name: "cache", keys: [
        Key("ttl", .duration, "Freshness lifetime when the server does not say.", default: "5m"),
        Key("max-size", .size, "Disk space this service's cached responses may take.", default: "10MiB"),
    ])

    static let service = Table(name: "a service", keys: [
        Key("hosts", .list(.hostPattern), "Hosts the service claims: exact names or addresses, or `*.example.com`."),
        Key("scheme", .choice(["https", "http"]), "The scheme the service is reached with.", default: "https"),
        Key("authoriser", .string, "The name of an authoriser under `authorisers:`."),
        Key("rate-limit", .mappingOrOff(rateLimit), "Merged over defaults.rate-limit key by key; `off` = unlimited."),
        Key("retry", .mapping(retry), "Merged over defaults.retry key by key."),
        Key("timeouts", .mapping(timeouts), "Merged over defaults.timeouts key by key."),
        Key("fallbacks", .dictionary(keyShape: .hostPattern, value: .list(.hostAddress)), "Per exact host, addresses tried in order when it is unreachable."),
        Key("tls", .mapping(tls), "TLS rules, merged over defaults.tls key by key."),
        Key("connect-to", .string, "unix:/path: send the service's requests over this Unix domain socket (relative to this file), its Host field still the URL's."),
        Key("proxy", .mappingOrOff(proxy), "The proxy this service goes through, replacing defaults.proxy whole; `off` = direct. Absent everywhere: https_proxy/http_proxy/no_proxy from the environment."),
        Key("cache", .mappingOrOff(cache), "Response caching; absent or `off` = not cached."),
        Key("propagate-trace-context", .boolean, "Whether requests carry the caller's trace context (W3C traceparent/tracestate).", default: "true"),
    ], required: ["hosts"])

    static let authoriser = Table(name: "an authoriser", keys: [
        Key("plugin", .string, "The plugin type (static-bearer, oauth2-refresh, ...)."),
        Key("settings", .settings, "The plugin's settings; strings may embed ${env:NAME} and ${file:path}."),
        Key("timeout", .duration, "How long a request may wait for this authoriser.", default: "10s"),
        Key("allow-plain-http", .boolean, "Whether credentials may be sent over plain http.", default: "false"),
        Key("share-tokens", .boolean, "Whether the fleet shares this authoriser's tokens through `coordination` (one refresh for every instance).", default: "false"),
    ], required: ["plugin"])

    static let redis = Table(name: "coordination.redis", keys: [
        Key("url", .redisURL, "redis://host[:port][/db], or rediss:// for TLS; no user or password in it (required)."),
        Key("username", .string, "The Redis ACL user."),
        Key("password", .string, "The password; a secret: write ${env:NAME} or ${file:path}."),
        Key("key-prefix", .keyPrefix, "What every key Courier writes starts with (1-64 printable ASCII characters, no space).", default: "\"courier:\""),
        Key("timeout", .duration, "How long one command may take (more than 0, at most 10s).", default: "50ms"),
        Key("token-key", .string, "32 bytes in base64 that encrypt shared tokens at rest; a secret: write ${env:NAME} or ${file:path}."),
        Key("tls", .mapping(tls), "TLS rules for rediss:// (pins, ca-file, min-version, a client certificate)."),
    ], required: ["url"])

    static let coordination = Table(name: "coordination", keys: [
        Key("redis", .mapping(redis), "The Redis (or Valkey) server the fleet shares limits and tokens through (required)."),
        Key("on-unavailable", .choice(["local", "open", "closed"]), "While Redis cannot be reached: local (each instance keeps its share of every fleet limit), open (fleet limits dropped) or closed (loads fail).", default: "local"),
    ], required: ["redis"])

    static let root = Table(name: "the policy", keys: [
        Key("version", .integer(minimum: 1, maximum: nil), "The language version; must be 1."),
        Key("include", .oneOrList(.string), "Files whose defaults, authorisers and services join this policy, relative to this file."),
        Key("defaults", .mapping(defaults), "Values every service inherits."),
        Key("authorisers", .dictionary(keyShape: nil, value: .mapping(authoriser)), "Named authoriser instances."),
        Key("services", .dictionary(keyShape: nil, value: .mapping(service)), "Named services."),
        Key("coordination", .mapping(coordination), "The backend a fleet of instances shares `scope: fleet` rate limits and `share-tokens` tokens through; one per policy."),
    ], required: ["version"])

    /// Every table, for tests and docs.
    static let allTables: [Table] = [
        root, defaults, timeouts, retry, backoff, budget, rateLimit, endpointLimit, authoriser, service, tls, proxy, cache, coordination, redis,
    ]
}
