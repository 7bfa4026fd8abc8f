internal import CourierCore

/// Joins the parsed files of one compilation: merges defaults and services key by key, checks what only the
/// whole policy can tell (names, hosts, references, fallbacks, retry curves against timeouts), and builds the
/// graph.
struct PolicyLinker {
    /// Parsed files in merge order (includes before their includer, depth first).
    let files: [ParsedPolicyFile]
    let registry: AuthoriserRegistry
    private(set) var diagnostics: [Diagnostic] = []

    init(files: [ParsedPolicyFile], registry: AuthoriserRegistry) {
        self.files = files
        self.registry = registry
    }

    /// Authoriser names, sorted, for "did you mean"; built at the first unknown name.
    private var authoriserNames: [String]?
    /// Name comparisons left for "did you mean" on unknown authorisers. Each costs a bounded amount (see
    /// ``Suggestions``), but thousands of services naming unknown authorisers beside a thousand declared ones
    /// would still cost millions; past the budget the suggestion is only "declare it".
    private var suggestionComparisonsLeft = 100_000

    private mutating func suggestAuthoriser(for name: String, among authorisers: [String: AuthoriserInstance]) -> String? {
        let names = authoriserNames ?? authorisers.keys.sorted()
        authoriserNames = names
        guard suggestionComparisonsLeft >= names.count else { return nil }
        suggestionComparisonsLeft -= names.count
        return Suggestions.didYouMean(name, in: names)
    }

    private mutating func report(_ rule: PolicyRule, _ message: String, at location: SourceLocation, suggestion: String? = nil) {
        diagnostics.append(Diagnostic(rule.severity, rule: rule.id, message: message, suggestion: suggestion, at: location))
    }

    mutating func link(fileList: [String]) -> PolicyGraph {
        // Built-in defaults <- each file's `defaults:` in merge order.
        let defaultsLayer = files.reduce(PolicyLayer()) { $1.defaults.merged(over: $0) }
        let fallbackLocation = SourceLocation(file: fileList.first ?? "", line: 1, column: 1)
        let defaults = PolicyDefaults(
            timeouts: PolicyLinker.timeouts(defaultsLayer),
            retry: PolicyLinker.retry(defaultsLayer),
            rateLimit: PolicyLinker.rateLimit(defaultsLayer),
            propagatesTraceContext: defaultsLayer.bool("propagate-trace-context") ?? true,
            origins: PolicyLinker.origins(defaultsLayer), proxy: PolicyLinker.proxy(defaultsLayer))
        checkRetry(merged: defaultsLayer, own: defaultsLayer, retry: defaults.retry, timeouts: defaults.timeouts, owner: "the defaults", anchor: fallbackLocation)

        // One coordination section per policy, whichever file has it.
        var coordination: ParsedPolicyFile.Coordination?
        for file in files {
            guard let section = file.coordination else { continue }
            if let first = coordination {
                report(.duplicateCoordination, "a coordination section is already declared at \(first.location); a policy has one backend", at: section.location,
                       suggestion: "keep one section, in a file that the others include if they share it")
            } else {
                coordination = section
            }
        }
        if coordination == nil { checkFleetScopes(defaultsLayer, owner: "the defaults") }

        // Authorisers, unique by name across files.
        var authorisers: [String: AuthoriserInstance] = [:]
        var authoriserOrder: [ParsedPolicyFile.Authoriser] = []
        for file in files {
            for a in file.authorisers {
                if let first = authorisers[a.instance.name] {
                    report(.duplicateAuthoriser, "authoriser '\(a.instance.name.abbreviated)' is already declared at \(first.definedAt)", at: a.location,
                           suggestion: "rename one of them")
                    continue
                }
                authorisers[a.instance.name] = a.instance
                authoriserOrder.append(a)
            }
        }

        // Services, unique by name; hosts unique across services.
        var services: [ServicePolicy] = []
        var serviceNames: [String: SourceLocation] = [:]
        var claimed: [HostPattern: (service: String, location: SourceLocation)] = [:]
        claimed.reserveCapacity(files.reduce(0) { $0 + $1.services.reduce(0) { $0 + $1.hosts.count } })
        var usedAuthorisers: Set<String> = []
        for file in files {
            for parsed in file.services {
                if let first = serviceNames[parsed.name] {
                    report(.duplicateService, "service '\(parsed.name.abbreviated)' is already declared at \(first)", at: parsed.location,
                           suggestion: "service names must be unique across all included files; rename one")
                    continue
                }
                serviceNames[parsed.name] = parsed.location
                let merged = parsed.layer.merged(over: defaultsLayer)
                let service = PolicyLinker.service(parsed, merged)
                checkService(parsed, service: service, merged: merged, authorisers: authorisers, claimed: &claimed)
                if coordination == nil { checkFleetScopes(parsed.layer, owner: "service '\(parsed.name.abbreviated)'") }
                if let a = service.authoriser { usedAuthorisers.insert(a) }
                services.append(service)
            }
        }
        checkFallbackCycles(services)
        // An authoriser without a plugin type was already reported as broken.
        for a in authoriserOrder where !usedAuthorisers.contains(a.instance.name) && !a.instance.plugin.isEmpty {
            report(.unusedAuthoriser, "authoriser '\(a.instance.name.abbreviated)' is not used by any service", at: a.location,
                   suggestion: "assign it with 'authoriser: \(a.instance.name.abbreviated)' in a service, or remove it")
        }
        checkSharedTokens(authoriserOrder, coordination: coordination)
        return PolicyGraph(
            version: 1, services: services, authorisers: authorisers, defaults: defaults, coordination: coordination?.policy,
            files: fileList)
    }

    // MARK: - Coordination

    /// In a policy without `coordination:`: every `scope: fleet` that `layer` itself says (the rate limit's and
    /// its endpoint overrides'), at the `scope` key. Inherited scopes were reported where they are written.
    private mutating func checkFleetScopes(_ layer: PolicyLayer, owner: String) {
        let suggestion = "add a top-level 'coordination: { redis: { url: \"redis://127.0.0.1:6379/0\" } }', or use 'scope: process'"
        if let setting = layer.scope("rate-limit.scope"), setting.scope == .fleet {
            report(.fleetScopeWithoutCoordination, "the rate limit of \(owner) has scope: fleet, but the policy has no coordination section to share it through",
                   at: setting.keyLocation, suggestion: suggestion)
        }
        for (prefix, entry) in layer.children(of: "rate-limit.endpoints") {
            guard case .limit(_, let own?) = entry.value, own.scope == .fleet else { continue }
            report(.fleetScopeWithoutCoordination, "endpoint '\(prefix.abbreviated)' of \(owner) has scope: fleet, but the policy has no coordination section to share it through",
                   at: own.keyLocation, suggestion: suggestion)
        }
    }

    /// `share-tokens: true` needs a backend and a key to encrypt the tokens with. An authoriser whose plugin cannot
    /// share tokens, and a broken coordination section, were reported as such.
    private mutating func checkSharedTokens(_ authorisers: [ParsedPolicyFile.Authoriser], coordination: ParsedPolicyFile.Coordination?) {
        for a in authorisers {
            guard let key = a.shareTokensKey, registry[a.instance.plugin]?.supportsSharedTokens == true else { continue }
            let name = a.instance.name.abbreviated
            if coordination == nil {
                report(.sharedTokensWithoutCoordination, "authoriser '\(name)' says share-tokens: true, but the policy has no coordination section to share them through", at: key,
                       suggestion: "add a top-level 'coordination:' with 'redis: { url: …, token-key: \"${env:COURIER_TOKEN_KEY}\" }', or remove 'share-tokens'")
            } else if coordination?.policy != nil, coordination?.hasTokenKey == false {
                report(.sharedTokensWithoutTokenKey, "authoriser '\(name)' says share-tokens: true, but coordination.redis has no token-key to encrypt the shared tokens with", at: key,
                       suggestion: "add 'token-key: \"${env:COURIER_TOKEN_KEY}\"' under coordination.redis (32 random bytes in base64: openssl rand -base64 32)")
            }
        }
    }

    // MARK: - Checks

    private mutating func checkService(
        _ parsed: ParsedPolicyFile.Service, service: ServicePolicy, merged: PolicyLayer,
        authorisers: [String: AuthoriserInstance], claimed: inout [HostPattern: (service: String, location: SourceLocation)]
    ) {
        let own = parsed.layer
        if merged["tls.client-certificate"] == nil, let orphan = merged["tls.client-key"] ?? merged["tls.client-key-password"] {
            report(.clientKeyWithoutCertificate, "service '\(parsed.name.abbreviated)' has a client key or key password but no tls.client-certificate", at: orphan.location,
                   suggestion: "add 'client-certificate: FILE' beside it (the certificate, then any intermediates, in PEM)")
        }
        if parsed.hosts.isEmpty && !parsed.hostsInvalid {
            report(.serviceWithoutHosts, "service '\(parsed.name.abbreviated)' claims no hosts, so no request can ever use it", at: parsed.hostsLocation ?? parsed.location,
                   suggestion: "add 'hosts: [api.example.com]'")
        }
        var ownWildcards: Set<String> = []
        for (pattern, location) in parsed.hosts {
            if let first = claimed[pattern] {
                let whom = first.service == parsed.name ? "this service already" : "service '\(first.service.abbreviated)'"
                report(.hostClaimedTwice, "host '\(pattern)' is already claimed by \(whom) at \(first.location)", at: location,
                       suggestion: "a host belongs to one service; remove it from one of them")
            } else {
                claimed[pattern] = (parsed.name, location)
            }
            if pattern.isWildcard { ownWildcards.insert(pattern.name) }
        }
        // A wildcard covered by a wider wildcard of the same service changes nothing.
        for (pattern, location) in parsed.hosts where pattern.isWildcard {
            if let wider = PolicyLinker.widerWildcard(of: pattern.name, in: ownWildcards) {
                report(.unreachableRule, "'\(pattern)' is redundant: '*.\(wider)' in the same service already covers every host it matches", at: location,
                       suggestion: "remove '\(pattern)'")
            }
        }
        if let entry = own["authoriser"], let name = service.authoriser {
            if let instance = authorisers[name] {
                if service.scheme == .http && !instance.allowPlainHTTP {
                    report(.credentialsOverHTTP, "service '\(parsed.name.abbreviated)' is plain http, so authoriser '\(name.abbreviated)' would send credentials in clear text (the loader refuses unless allowed)",
                           at: entry.location, suggestion: "use 'scheme: https', or set 'allow-plain-http: true' on the authoriser if this is deliberate")
                }
            } else {
                report(.unknownAuthoriser, "service '\(parsed.name.abbreviated)' uses authoriser '\(name.abbreviated)', which no file declares", at: entry.location,
                       suggestion: suggestAuthoriser(for: name, among: authorisers) ?? "declare it under 'authorisers:'")
            }
        }
        let fallbackEntries = own.touches("fallbacks") ? own.children(of: "fallbacks") : []
        let exactHosts = fallbackEntries.isEmpty ? [] : Set(parsed.hosts.filter { !$0.pattern.isWildcard }.map(\.pattern.name))
        for (host, entry) in fallbackEntries where !exactHosts.contains(host) {
            report(.unreachableRule, "fallbacks for '\(host.abbreviated)' never apply: service '\(parsed.name.abbreviated)' does not claim '\(host.abbreviated)' exactly", at: entry.location,
                   suggestion: "add '\(host.abbreviated)' to hosts, or remove the entry")
        }
        if service.scheme == .http && own.touches("tls") {
            let location = own.entries.filter { $0.key.hasPrefix("tls.") }.map(\.value.location).min() ?? parsed.location
            report(.unreachableRule, "the tls rules of service '\(parsed.name.abbreviated)' never apply: it is plain http", at: location, suggestion: "use 'scheme: https' or remove 'tls'")
        }
        if let pins = own["tls.pins"], service.tls.pins.count == 1 {
            report(.singlePin, "service '\(parsed.name.abbreviated)' pins one key only; when that key is rotated every client fails until it is updated", at: pins.location,
                   suggestion: "add a backup pin (the SPKI hash of the next key, kept offline)")
        }
        if own["rate-limit.burst"] != nil && service.rateLimit.perEndpoint == nil, let burst = own["rate-limit.burst"] {
            report(.unreachableRule, "rate-limit.burst has no effect without requests-per-second", at: burst.location, suggestion: "add 'requests-per-second'")
        }
        if let scope = own["rate-limit.scope"], service.rateLimit.perEndpoint == nil, service.rateLimit.endpoints.isEmpty {
            report(.unreachableRule, "rate-limit.scope has no effect without requests-per-second or endpoints", at: scope.location, suggestion: "add 'requests-per-second'")
        }
        if own.touches("retry", "timeouts") {
            checkRetry(merged: merged, own: own, retry: service.retry, timeouts: service.timeouts, owner: "service '\(parsed.name.abbreviated)'", anchor: parsed.location)
        }
    }

    /// Retry-curve checks, for the defaults or a service. `own` is the layer that says something new; checks
    /// about keys it does not set were already made on the defaults.
    private mutating func checkRetry(
        merged: PolicyLayer, own: PolicyLayer, retry: RetryPolicy, timeouts: TimeoutPolicy, owner: String, anchor: SourceLocation
    ) {
        func at(_ paths: String...) -> SourceLocation {
            for p in paths { if let e = own[p] { return e.location } }
            for p in paths { if let e = merged[p] { return e.location } }
            return anchor
        }
        if own.touches("retry.backoff.initial", "retry.backoff.max"), let max = retry.backoff.max, retry.backoff.initial > max {
            report(.backoffInitialExceedsMax, "retry.backoff.initial (\(DurationFormat.format(retry.backoff.initial))) is longer than retry.backoff.max (\(DurationFormat.format(max))) for \(owner)",
                   at: at("retry.backoff.max", "retry.backoff.initial"), suggestion: "make initial the shortest delay and max the longest")
        }
        if case .unbounded? = own["retry.backoff.max"]?.value {
            report(.unboundedBackoff, "retry.backoff.max is none, so the delays of \(owner) grow without bound", at: own["retry.backoff.max"]!.location,
                   suggestion: "cap it, e.g. 'max: 30s'")
        }
        if own.touches("retry.methods", "retry.idempotency-key", "retry.max-attempts"), retry.maxAttempts > 1, retry.idempotencyKeyHeader == nil {
            let risky = retry.methods.filter { !$0.isIdempotent }.map(\.rawValue).sorted()
            if !risky.isEmpty {
                report(.nonIdempotentRetry, "\(owner) would retry \(risky.joined(separator: ", ")), which is not idempotent: a retry may repeat its effect", at: at("retry.methods", "retry.max-attempts"),
                       suggestion: "remove \(risky.joined(separator: ", ")) from retry.methods, or set 'idempotency-key: Idempotency-Key' so the server can deduplicate")
            }
        }
        if own.touches("retry.on", "retry.max-attempts"), own["retry.on"] != nil, own.int("retry.max-attempts") == 1, !retry.conditions.isEmpty {
            report(.unreachableRule, "retry.on can never trigger: retry.max-attempts is 1 for \(owner)", at: own["retry.on"]!.location,
                   suggestion: "remove 'on', or allow more than one attempt")
        }
        if own.touches("timeouts.connect", "timeouts.total"), timeouts.connect > timeouts.total {
            report(.retryExceedsTimeout, "timeouts.connect (\(DurationFormat.format(timeouts.connect))) is longer than timeouts.total (\(DurationFormat.format(timeouts.total))) for \(owner)",
                   at: at("timeouts.connect", "timeouts.total"), suggestion: "the total deadline cuts every connect short; shorten connect or lengthen total")
        }
        if retry.backoff.max != nil, retry.maxAttempts > 1 {
            let worst = retry.worstCaseBackoff
            if worst > timeouts.total {
                let keys = ["retry.max-attempts", "retry.backoff.initial", "retry.backoff.max", "retry.backoff.multiplier", "retry.backoff.jitter", "timeouts.total"]
                if keys.contains(where: { own[$0] != nil }) {
                    report(.retryExceedsTimeout, "the retry curve of \(owner) can wait \(DurationFormat.format(worst)) in back-off over \(retry.maxAttempts) attempts, longer than timeouts.total (\(DurationFormat.format(timeouts.total))); the last attempts could never run",
                           at: at("retry.max-attempts", "retry.backoff.max", "retry.backoff.initial", "retry.backoff.multiplier", "timeouts.total"),
                           suggestion: "lower max-attempts or backoff.max, or raise timeouts.total")
                }
            }
        }
    }

    /// Fallback lists form a graph host → alternatives; a path back to a host is a cycle.
    private mutating func checkFallbackCycles(_ services: [ServicePolicy]) {
        var edges: [String: (targets: [String], location: SourceLocation)] = [:]
        for service in services {
            for (host, addresses) in service.fallbacks {
                let location = service.origins["fallbacks.\(host)"] ?? service.definedAt
                edges[host] = (addresses.map(\.host), location)
            }
        }
        // Only a host whose list names another host with a list can be on a cycle.
        guard edges.values.contains(where: { $0.targets.contains { edges[$0] != nil } }) else { return }
        // Iterative DFS with colours; each back edge is one cycle, reported at the entry that closes it.
        var colour: [String: Int] = [:]  // 1 = on the path, 2 = done
        var reported = 0
        for start in edges.keys.sorted() where colour[start] == nil {
            var path: [(host: String, next: Int)] = [(start, 0)]
            colour[start] = 1
            while let top = path.last {
                let targets = edges[top.host]?.targets ?? []
                if top.next >= targets.count {
                    colour[top.host] = 2
                    path.removeLast()
                    continue
                }
                path[path.count - 1].next += 1
                let target = targets[top.next]
                switch colour[target] {
                case 1?:
                    reported += 1
                    guard reported <= 100 else { continue }  // hostile graphs: bounded work per cycle report
                    let recent = path.suffix(20).map(\.host)
                    let chain = recent.contains(target) ? Array(recent.drop { $0 != target }) + [target] : ["…"] + recent + [target]
                    let message = target == top.host
                        ? "host '\(top.host.abbreviated)' lists itself as its own fallback"
                        : "fallbacks form a cycle: \(chain.joined(separator: " → "))"
                    report(.fallbackCycle, message, at: edges[top.host]!.location,
                           suggestion: "a fallback must be a different host that does not fall back to this one")
                case nil:
                    colour[target] = 1
                    path.append((target, 0))
                default:
                    break
                }
            }
        }
    }

    /// The longest proper suffix of `name` (on label boundaries) that is in `wildcards`: a look-up per label.
    static func widerWildcard(of name: String, in wildcards: Set<String>) -> String? {
        var rest = Substring(name)
        while let dot = rest.firstIndex(of: ".") {
            rest = rest[rest.index(after: dot)...]
            if wildcards.contains(String(rest)) { return String(rest) }
        }
        return nil
    }

    // MARK: - Building values from a merged layer

    /// Where each leaf came from; an endpoint override's own `scope` is `rate-limit.endpoints.<prefix>.scope`.
    static func origins(_ layer: PolicyLayer) -> [String: SourceLocation] {
        var out = layer.entries.mapValues(\.location)
        for (path, entry) in layer.entries {
            if case .limit(_, let own?) = entry.value { out[path + ".scope"] = own.keyLocation }
        }
        return out
    }

    static func timeouts(_ l: PolicyLayer) -> TimeoutPolicy {
        let b = TimeoutPolicy.builtIn
        return TimeoutPolicy(
            connect: l.duration("timeouts.connect") ?? b.connect,
            idle: l.duration("timeouts.idle") ?? b.idle,
            total: l.duration("timeouts.total") ?? b.total)
    }

    static func retry(_ l: PolicyLayer) -> RetryPolicy {
        let b = RetryPolicy.builtIn
        var conditions = b.conditions
        if case .conditions(let c)? = l["retry.on"]?.value { conditions = Set(c) }
        var methods = b.methods
        if case .methods(let m)? = l["retry.methods"]?.value { methods = Set(m) }
        var max: Duration? = b.backoff.max
        switch l["retry.backoff.max"]?.value {
        case .unbounded?: max = nil
        case .duration(let d)?: max = d
        default: break
        }
        var jitter = b.backoff.jitter
        if case .jitter(let j)? = l["retry.backoff.jitter"]?.value { jitter = j }
        let backoff = BackoffPolicy(
            initial: l.duration("retry.backoff.initial") ?? b.backoff.initial, max: max,
            multiplier: l.number("retry.backoff.multiplier") ?? b.backoff.multiplier, jitter: jitter)
        let budget: RetryPolicy.Budget? = l.isOff("retry.budget") ? nil : RetryPolicy.Budget(
            ratio: l.number("retry.budget.ratio") ?? RetryPolicy.Budget.builtIn.ratio,
            minPerSecond: l.number("retry.budget.min-per-second") ?? RetryPolicy.Budget.builtIn.minPerSecond)
        return RetryPolicy(
            maxAttempts: l.int("retry.max-attempts") ?? b.maxAttempts, conditions: conditions, methods: methods,
            backoff: backoff, respectRetryAfter: l.bool("retry.respect-retry-after") ?? b.respectRetryAfter,
            retryAfterCap: l.duration("retry.retry-after-cap") ?? b.retryAfterCap, budget: budget,
            idempotencyKeyHeader: l.string("retry.idempotency-key"))
    }

    /// The merged rate limit; an endpoint override without a `scope` of its own takes `rate-limit.scope`.
    static func rateLimit(_ l: PolicyLayer) -> RateLimitPolicy {
        let scope = l.scope("rate-limit.scope")?.scope ?? .process
        var perEndpoint: RateLimit?
        if let rps = l.number("rate-limit.requests-per-second") {
            perEndpoint = RateLimit(requestsPerSecond: rps, burst: l.int("rate-limit.burst") ?? defaultBurst(rps), scope: scope)
        }
        var endpoints: [String: RateLimit] = [:]
        for (prefix, entry) in l.children(of: "rate-limit.endpoints") {
            if case .limit(var limit, let own) = entry.value {
                limit.scope = own?.scope ?? scope
                endpoints[prefix] = limit
            }
        }
        return RateLimitPolicy(perEndpoint: perEndpoint, endpoints: endpoints)
    }

    /// The `tls.*` leaves of a service, or of `coordination.redis` (parsed into a layer of their own).
    static func tls(_ l: PolicyLayer) -> TLSPolicy {
        var tls = TLSPolicy.builtIn
        if case .pins(let p)? = l["tls.pins"]?.value { tls.pins = p }
        tls.caFile = l.string("tls.ca-file")
        if case .tlsVersion(let v)? = l["tls.min-version"]?.value { tls.minVersion = v }
        if let certificate = l.string("tls.client-certificate") {
            var password: PolicyString?
            if case .secret(let s)? = l["tls.client-key-password"]?.value { password = s }
            tls.clientIdentity = ClientIdentity(certificateFile: certificate, keyFile: l.string("tls.client-key"), password: password)
        }
        return tls
    }

    static func service(_ parsed: ParsedPolicyFile.Service, _ l: PolicyLayer) -> ServicePolicy {
        var scheme = ServicePolicy.Scheme.https
        if case .scheme(let s)? = l["scheme"]?.value { scheme = s }
        var fallbacks: [String: [HostAddress]] = [:]
        for (host, entry) in l.children(of: "fallbacks") {
            if case .addresses(let a) = entry.value { fallbacks[host] = a }
        }
        var cache: CachePolicy?
        if case .on? = l["cache"]?.value {
            var size = CachePolicy.builtIn.maxSize
            if case .size(let s)? = l["cache.max-size"]?.value { size = s }
            cache = CachePolicy(ttl: l.duration("cache.ttl") ?? CachePolicy.builtIn.ttl, maxSize: size)
        }
        return ServicePolicy(
            name: parsed.name, hosts: parsed.hosts.map(\.pattern), scheme: scheme, authoriser: l.string("authoriser"),
            rateLimit: rateLimit(l), retry: retry(l), timeouts: timeouts(l), fallbacks: fallbacks, tls: tls(l), cache: cache,
            propagatesTraceContext: l.bool("propagate-trace-context") ?? true, definedAt: parsed.location, origins: origins(l),
            unixSocket: l.string("connect-to"), proxy: proxy(l))
    }

    /// The `proxy` leaf: nil when no layer names one.
    static func proxy(_ l: PolicyLayer) -> ProxyPolicy? {
        if case .proxy(let p)? = l["proxy"]?.value { return p }
        return nil
    }
}
