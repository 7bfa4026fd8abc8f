/// A compiled policy: immutable, `Sendable`, with value semantics. Built by the policy compiler; reloading a
/// policy builds a new graph, and whoever holds the old one keeps a valid graph.
///
/// ``route(for:method:)`` answers in time proportional to the number of labels in the host (hash look-ups),
/// whatever the number of services. Precedence: an exact host beats any wildcard; among wildcards the longest
/// suffix wins (`*.eu.api.example.com` beats `*.api.example.com`); a host no service claims gets the defaults.
public struct PolicyGraph: Sendable {
    private final class Storage: Sendable {
        let version: Int
        let services: [ServicePolicy]
        let authorisers: [String: AuthoriserInstance]
        let defaults: PolicyDefaults
        let files: [String]
        let exact: [String: Int]
        let wildcard: [String: Int]
        let byName: [String: Int]

        init(
            version: Int, services: [ServicePolicy], authorisers: [String: AuthoriserInstance],
            defaults: PolicyDefaults, files: [String]
        ) {
            self.version = version
            self.services = services
            self.authorisers = authorisers
            self.defaults = defaults
            self.files = files
            var exact: [String: Int] = [:]
            var wildcard: [String: Int] = [:]
            var byName: [String: Int] = [:]
            for (i, service) in services.enumerated() {
                byName[service.name] = byName[service.name] ?? i
                for host in service.hosts {
                    // The compiler reports a host claimed twice as an error; if a graph is built by hand anyway,
                    // the first service declared keeps it.
                    if host.isWildcard {
                        wildcard[host.name] = wildcard[host.name] ?? i
                    } else {
                        exact[host.name] = exact[host.name] ?? i
                    }
                }
            }
            self.exact = exact
            self.wildcard = wildcard
            self.byName = byName
        }
    }

    private let storage: Storage

    public init(
        version: Int = 1,
        services: [ServicePolicy],
        authorisers: [String: AuthoriserInstance] = [:],
        defaults: PolicyDefaults = .builtIn,
        files: [String] = []
    ) {
        storage = Storage(version: version, services: services, authorisers: authorisers, defaults: defaults, files: files)
    }

    /// The language version the policy declared.
    public var version: Int { storage.version }
    /// Services in declaration order (includes first, depth first).
    public var services: [ServicePolicy] { storage.services }
    public var authorisers: [String: AuthoriserInstance] { storage.authorisers }
    public var defaults: PolicyDefaults { storage.defaults }
    /// Every file the policy was compiled from, the root first.
    public var files: [String] { storage.files }

    public func service(named name: String) -> ServicePolicy? {
        storage.byName[name].map { storage.services[$0] }
    }

    /// The service claiming `host` (lower case) and how it matched, or nil.
    public func service(forHost host: String) -> (ServicePolicy, Route.Match)? {
        if let i = storage.exact[host] {
            let service = storage.services[i]
            return (service, .exact(HostPattern(name: host, isWildcard: false)))
        }
        guard !storage.wildcard.isEmpty else { return nil }
        // Walk the host's proper suffixes from the longest: "a.b.example.com" → "b.example.com" → "example.com".
        var utf8 = Substring(host).utf8
        while let dot = utf8.firstIndex(of: UInt8(ascii: ".")) {
            utf8 = utf8[utf8.index(after: dot)...]
            if let i = storage.wildcard[String(Substring(utf8))] {
                return (storage.services[i], .wildcard(HostPattern(name: String(Substring(utf8)), isWildcard: true)))
            }
        }
        return nil
    }

    /// Everything the policy decides for a request to `url` with `method`.
    public func route(for url: HTTPURL, method: HTTPMethod = .get) -> Route {
        guard let (service, match) = service(forHost: url.host) else {
            let d = storage.defaults
            let key = url.host + url.firstPathComponent
            return Route(
                service: nil, match: .defaults, endpointKey: key, rateLimit: d.rateLimit.perEndpoint,
                retry: d.retry, retriesAllowed: d.retry.maxAttempts > 1 && d.retry.allowsRetry(of: method),
                timeouts: d.timeouts, fallbacks: [], authoriser: nil, tls: .builtIn, cache: nil
            )
        }
        let endpointKey: String
        let limit: RateLimit?
        if let override = service.rateLimit.override(forPath: url.path) {
            endpointKey = url.host + override.prefix
            limit = override.limit
        } else {
            endpointKey = url.host + url.firstPathComponent
            limit = service.rateLimit.perEndpoint
        }
        return Route(
            service: service, match: match, endpointKey: endpointKey, rateLimit: limit, retry: service.retry,
            retriesAllowed: service.retry.maxAttempts > 1 && service.retry.allowsRetry(of: method),
            timeouts: service.timeouts, fallbacks: service.fallbacks[url.host] ?? [],
            authoriser: service.authoriser.flatMap { storage.authorisers[$0] }, tls: service.tls, cache: service.cache
        )
    }

    /// Parses `url` and routes it; nil when the URL is not an absolute http(s) URL.
    public func route(for url: String, method: HTTPMethod = .get) -> Route? {
        HTTPURL(url).map { route(for: $0, method: method) }
    }
}
