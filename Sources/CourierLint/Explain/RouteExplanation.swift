package import CourierCore

/// What `courier explain POLICY URL` reports: which service a request to a URL gets and why, the endpoint key,
/// every effective value with where it came from, and the worst case the route allows.
///
/// Secrets are never resolved: authoriser settings print as written, so `${env:TOKEN}` stays a reference, and
/// a literal value in a setting the plugin marks as secret prints as `<hidden literal>`.
package struct RouteExplanation: Hashable, Sendable {
    /// How the service was chosen.
    package enum MatchKind: String, Hashable, Sendable, Encodable {
        case exact, wildcard, defaults
    }

    /// The URL as Courier parsed it.
    package var url: String
    /// The request method (upper case as given).
    package var method: String
    /// The chosen service, or nil when only the defaults apply.
    package var service: String?
    /// Where the chosen service is declared.
    package var serviceDefinedAt: SourceLocation?
    /// Exact host, wildcard, or defaults.
    package var match: MatchKind
    /// The host pattern that matched (`api.example.com`, `*.api.example.com`), or nil for the defaults.
    package var pattern: String?
    /// Why this service (or the defaults) was chosen, in one sentence.
    package var reason: String
    /// The rate limiter's bucket key.
    package var endpointKey: String
    /// Every effective value, in the order of the policy language (timeouts, retry, rate limit, authoriser,
    /// fallbacks, TLS, cache).
    package var values: [RouteValue]
    /// The worst the route allows: attempts, waiting, request rate.
    package var worstCase: RouteWorstCase
    /// What the route shares with the fleet through the coordination backend; nil when nothing.
    package var coordination: RouteCoordination?
    /// Which proxy the route's requests go through, and why.
    package var proxy: RouteProxy
    /// Things a reader should know (e.g. the URL's scheme differs from the service's).
    package var notes: [String]

    /// Explains the route `graph` gives a `method` request to `url`. `registry` says which authoriser
    /// settings are secrets; `environment` is what a load would read for proxies (nil: none).
    package init(
        graph: PolicyGraph, url: HTTPURL, method: HTTPMethod = .get, registry: AuthoriserRegistry = .builtIn,
        environment: [String: String]? = nil
    ) {
        let route = graph.route(for: url, method: method)
        self.proxy = RouteProxy(route: route, url: url, environment: environment)
        self.url = url.description
        self.method = method.rawValue
        self.endpointKey = route.endpointKey.description
        self.notes = []
        let defaults = graph.defaults

        switch route.match {
        case .exact(let p):
            match = .exact
            pattern = p.description
        case .wildcard(let p):
            match = .wildcard
            pattern = p.description
        case .defaults:
            match = .defaults
            pattern = nil
        }
        let serviceOrigins = route.service?.origins ?? [:]
        func origin(_ key: String) -> ValueOrigin {
            if let l = serviceOrigins[key] ?? defaults.origins[key] { return .file(l) }
            return .builtInDefault
        }

        var values: [RouteValue] = []
        func add(_ key: String, _ value: String, _ from: ValueOrigin? = nil) {
            values.append(RouteValue(key: key, value: value, origin: from ?? origin(key)))
        }

        if let service = route.service {
            self.service = service.name
            serviceDefinedAt = service.definedAt
            let hostList = service.hosts.map(\.description).joined(separator: ", ")
            switch route.match {
            case .exact(let p):
                reason = "host '\(url.host)' is listed exactly ('\(p)') by service '\(service.name)'; "
                    + "an exact host beats every wildcard"
            case .wildcard(let p):
                reason = "host '\(url.host)' matches the wildcard '\(p)' of service '\(service.name)'; "
                    + "no service lists it exactly, and this is the longest matching wildcard"
            case .defaults:
                reason = "service '\(service.name)'"
            }
            add("hosts", "[\(hostList)]", .file(service.definedAt))
            add("scheme", service.scheme.rawValue)
            if service.scheme.rawValue != url.scheme {
                notes.append("the URL uses \(url.scheme) but service '\(service.name)' is declared \(service.scheme.rawValue)")
            }
        } else {
            service = nil
            serviceDefinedAt = nil
            reason = "no service claims host '\(url.host)' (no exact host and no wildcard matches); "
                + "the policy's defaults apply (timeouts, retry and rate limit), with no authoriser, fallbacks, pins or cache"
        }

        let t = route.timeouts
        add("timeouts.connect", DurationFormat.format(t.connect))
        add("timeouts.idle", DurationFormat.format(t.idle))
        add("timeouts.total", DurationFormat.format(t.total))

        let r = route.retry
        add("retry.max-attempts", String(r.maxAttempts))
        add("retry.on", "[" + r.conditions.sorted().map(\.description).joined(separator: ", ") + "]")
        add("retry.methods", "[" + r.methods.map(\.rawValue).sorted().joined(separator: ", ") + "]")
        add("retry.backoff.initial", DurationFormat.format(r.backoff.initial))
        add("retry.backoff.max", r.backoff.max.map(DurationFormat.format) ?? "none (no cap)")
        add("retry.backoff.multiplier", Self.number(r.backoff.multiplier))
        add("retry.backoff.jitter", r.backoff.jitter.rawValue)
        add("retry.respect-retry-after", String(r.respectRetryAfter))
        add("retry.retry-after-cap", DurationFormat.format(r.retryAfterCap))
        if let budget = r.budget {
            add("retry.budget.ratio", Self.number(budget.ratio))
            add("retry.budget.min-per-second", Self.number(budget.minPerSecond))
        } else {
            add("retry.budget", "off")
        }
        if let header = r.idempotencyKeyHeader { add("retry.idempotency-key", header) }

        if let service = route.service, let o = service.rateLimit.override(forPath: url.path) {
            let key = "rate-limit.endpoints.\(o.prefix)"
            add(key, Self.rate(o.limit))
            add("rate-limit.scope", o.limit.scope.rawValue, serviceOrigins["\(key).scope"].map(ValueOrigin.file) ?? origin("rate-limit.scope"))
        } else if let limit = route.rateLimit {
            add("rate-limit.requests-per-second", Self.number(limit.requestsPerSecond))
            add("rate-limit.burst", String(limit.burst))
            add("rate-limit.scope", limit.scope.rawValue)
        } else {
            add("rate-limit", "unlimited")
        }
        let coordination = RouteCoordination(route: route, coordination: graph.coordination)
        if let coordination, let section = graph.coordination {
            func from(_ key: String) -> ValueOrigin { section.origins[key].map(ValueOrigin.file) ?? .builtInDefault }
            add("coordination.redis", coordination.backend, section.origins["redis.url"].map(ValueOrigin.file) ?? .file(section.definedAt))
            add("coordination.redis.key-prefix", coordination.keyPrefix, from("redis.key-prefix"))
            add("coordination.on-unavailable", coordination.onUnavailable, from("on-unavailable"))
        }
        self.coordination = coordination

        if let service = route.service {
            if let name = service.authoriser {
                let instance = graph.authorisers[name]
                add("authoriser", instance.map { "\(name) (plugin \($0.plugin))" } ?? name)
                if let instance {
                    // Each value cites its own line; one not written is the built-in default.
                    func from(_ key: String) -> ValueOrigin { instance.origins[key].map(ValueOrigin.file) ?? .builtInDefault }
                    let descriptor = registry[instance.plugin]
                    for key in instance.settings.keys.sorted() {
                        let value = instance.settings[key]!
                        var printed = value.description
                        if descriptor?.setting(named: key)?.kind == .secret, value.literalString != nil {
                            printed = "<hidden literal>"
                        }
                        add("authorisers.\(name).settings.\(key)", printed, instance.origins["settings.\(key)"].map(ValueOrigin.file) ?? .file(instance.definedAt))
                    }
                    add("authorisers.\(name).timeout", DurationFormat.format(instance.timeout), from("timeout"))
                    add("authorisers.\(name).allow-plain-http", String(instance.allowPlainHTTP), from("allow-plain-http"))
                    add("authorisers.\(name).share-tokens", String(instance.shareTokens), from("share-tokens"))
                }
            } else {
                add("authoriser", "none")
            }
            let fallbackOrigin = serviceOrigins["fallbacks.\(url.host)"] ?? serviceOrigins["fallbacks"]
            add(
                "fallbacks.\(url.host)",
                route.fallbacks.isEmpty ? "none" : "[" + route.fallbacks.map(\.description).joined(separator: ", ") + "]",
                fallbackOrigin.map(ValueOrigin.file) ?? .builtInDefault
            )
            let tls = route.tls
            add("tls.pins", tls.pins.isEmpty ? "none" : "[" + tls.pins.map(\.description).joined(separator: ", ") + "]")
            add("tls.ca-file", tls.caFile ?? "system trust store")
            add("tls.min-version", tls.minVersion.rawValue)
            // Shown only when set (the files, never the password: its references, or <redacted> for literal text).
            if let identity = tls.clientIdentity {
                add("tls.client-certificate", identity.certificateFile)
                add("tls.client-key", identity.effectiveKeyFile, serviceOrigins["tls.client-key"].map(ValueOrigin.file) ?? serviceOrigins["tls.client-certificate"].map(ValueOrigin.file) ?? .builtInDefault)
                if let password = identity.keyPassword { add("tls.client-key-password", RedisCoordination.redacted(password)) }
            }
            if let socket = route.unixSocket { add("connect-to", "unix:\(socket)") }
            if let cache = route.cache {
                add("cache.ttl", DurationFormat.format(cache.ttl))
                add("cache.max-size", DurationFormat.formatSize(cache.maxSize))
            } else {
                add("cache", "off")
            }
            add("propagate-trace-context", String(route.propagatesTraceContext))
        } else {
            // Whatever `defaults:` says: a host no service claims is unknown to the policy.
            add("propagate-trace-context", "false (the host is not claimed by a service)", .builtInDefault)
        }
        if let policy = route.proxy { add("proxy", policy.summary, origin("proxy")) }
        self.values = values
        worstCase = RouteWorstCase(retry: r, method: method, timeouts: t, rateLimit: route.rateLimit)
    }

    /// The value printed for `key`, if the explanation has it.
    package func value(_ key: String) -> RouteValue? { values.first { $0.key == key } }

    /// A rate as a policy writes it: `2 req/s, burst 2`.
    static func rate(_ limit: RateLimit) -> String {
        "\(number(limit.requestsPerSecond)) req/s, burst \(limit.burst)"
    }

    /// `2` for 2.0, `0.5` for 0.5.
    static func number(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        return String(value)
    }
}
