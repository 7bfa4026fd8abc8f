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
        let coordination: CoordinationPolicy?
        let files: [String]
        /// Exact host -> (service index, index of the pattern in its hosts, its route entry).
        let exact: [String: Hit]
        /// Wildcard suffix -> the same, keyed by Substring so suffix probes allocate nothing.
        let wildcard: [Substring: Hit]
        /// The label counts of the wildcard suffixes, most first: only suffixes of these lengths are probed.
        let wildcardLabelCounts: [Int]
        let byName: [String: Int]
        let entries: [RouteEntry]
        let defaultEntry: RouteEntry

        init(
            version: Int, services: [ServicePolicy], authorisers: [String: AuthoriserInstance],
            defaults: PolicyDefaults, coordination: CoordinationPolicy?, files: [String]
        ) {
            self.version = version
            self.services = services
            self.authorisers = authorisers
            self.defaults = defaults
            self.coordination = coordination
            self.files = files
            let entries = services.map { service in
                RouteEntry(service: service, authoriser: service.authoriser.flatMap { authorisers[$0] })
            }
            var exact: [String: Hit] = [:]
            var wildcard: [Substring: Hit] = [:]
            var byName: [String: Int] = [:]
            for (i, service) in services.enumerated() {
                byName[service.name] = byName[service.name] ?? i
                for (p, host) in service.hosts.enumerated() {
                    // The compiler reports a host claimed twice as an error; if a graph is built by hand anyway,
                    // the first service declared keeps it.
                    let hit = Hit(service: i, pattern: p, entry: entries[i])
                    if host.isWildcard {
                        wildcard[Substring(host.name)] = wildcard[Substring(host.name)] ?? hit
                    } else {
                        exact[host.name] = exact[host.name] ?? hit
                    }
                }
            }
            self.entries = entries
            self.exact = exact
            self.wildcard = wildcard
            self.wildcardLabelCounts = Set(wildcard.keys.map { $0.utf8.filter { $0 == UInt8(ascii: ".") }.count + 1 })
                .sorted(by: >)
            self.byName = byName
            self.defaultEntry = RouteEntry(defaults: defaults)
        }
    }

    private let storage: Storage

    /// A host index entry.
    private struct Hit: Sendable {
        var service: Int
        var pattern: Int
        var entry: RouteEntry
    }

    package init(
        version: Int = 1,
        services: [ServicePolicy],
        authorisers: [String: AuthoriserInstance] = [:],
        defaults: PolicyDefaults = .builtIn,
        coordination: CoordinationPolicy? = nil,
        files: [String] = []
    ) {
        storage = Storage(
            version: version, services: services, authorisers: authorisers, defaults: defaults, coordination: coordination,
            files: files)
    }

    /// The language version the policy declared.
    public var version: Int { storage.version }
    /// Services in declaration order (includes first, depth first).
    public var services: [ServicePolicy] { storage.services }
    public var authorisers: [String: AuthoriserInstance] { storage.authorisers }
    public var defaults: PolicyDefaults { storage.defaults }
    /// The `coordination:` section (the backend fleet-scoped limits and shared tokens use); nil when no file of
    /// the policy has one.
    public var coordination: CoordinationPolicy? { storage.coordination }
    /// Every file the policy was compiled from, the root first.
    public var files: [String] { storage.files }

    public func service(named name: String) -> ServicePolicy? {
        storage.byName[name].map { storage.services[$0] }
    }

    /// The service claiming `host` (lower case) and how it matched, or nil.
    public func service(forHost host: String) -> (ServicePolicy, Route.Match)? {
        guard let hit = lookup(host) else { return nil }
        let service = storage.services[hit.service]
        let pattern = service.hosts[hit.pattern]
        return (service, pattern.isWildcard ? .wildcard(pattern) : .exact(pattern))
    }

    private func lookup(_ host: String) -> Hit? {
        if let hit = storage.exact[host] { return hit }
        guard !storage.wildcard.isEmpty else { return nil }
        // Probe the host's proper suffixes of the label counts some wildcard has, longest first (the longest
        // matching wildcard wins): "a.b.example.com" with wildcards of 3 and 2 labels probes "b.example.com",
        // then "example.com".
        let utf8 = host.utf8
        for count in storage.wildcardLabelCounts {
            // The suffix of `count` labels starts after the `count`-th dot from the right; a host needs more
            // labels than the suffix for a wildcard to cover it.
            var seen = 0
            var i = utf8.endIndex
            var start: String.Index?
            while i > utf8.startIndex {
                i = utf8.index(before: i)
                if utf8[i] == UInt8(ascii: ".") {
                    seen += 1
                    if seen == count {
                        start = utf8.index(after: i)
                        break
                    }
                }
            }
            if let start, let hit = storage.wildcard[host[start...]] { return hit }
        }
        return nil
    }

    /// Everything the policy decides for a request to `url` with `method`.
    public func route(for url: HTTPURL, method: HTTPMethod = .get) -> Route {
        let hit = lookup(url.host)
        let entry = hit?.entry ?? storage.defaultEntry
        let endpointKey: EndpointKey
        let limit: RateLimit?
        if let override = entry.override(forPath: url.path) {
            endpointKey = EndpointKey(host: url.host, pathPrefix: override.prefix)
            limit = override.limit
        } else {
            endpointKey = EndpointKey(host: url.host, pathPrefix: url.path[..<url.firstPathComponentEnd])
            limit = entry.perEndpoint
        }
        return Route(
            entry: entry, patternIndex: hit?.pattern ?? -1, endpointKey: endpointKey, rateLimit: limit,
            retriesAllowed: entry.retriesAllowed(for: method),
            fallbacks: entry.hasFallbacks ? entry.fallbacks[url.host] ?? [] : []
        )
    }

    /// Parses `url` and routes it; nil when the URL is not an absolute http(s) URL.
    public func route(for url: String, method: HTTPMethod = .get) -> Route? {
        HTTPURL(url).map { route(for: $0, method: method) }
    }
}
