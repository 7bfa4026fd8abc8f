internal import CoreMetrics
internal import CourierAuthorisers
internal import CourierCache
public import CourierCore
internal import CourierHTTPCache
internal import CourierPolicy
public import CourierTransport
internal import Logging
internal import Synchronization
internal import Tracing

#if canImport(FoundationEssentials)
internal import FoundationEssentials
#else
internal import Foundation
#endif

/// The data loader's shared half: one per app. Holds the policy graph, the transport, the rate limiter, one
/// retry budget per service, the fallback cool-down table and the consumption observers. Users get a
/// ``DataLoaderFactory`` from it, views a ``DataLoader`` from that.
///
/// ``reload(_:)`` swaps the graph atomically: a request takes the graph once, when it starts, and keeps it for
/// every attempt, so requests in flight finish under the policy they started with.
public final class DataLoaderService: Sendable {
    /// The `User-Agent` sent with every request that does not set its own.
    public let userAgent: String
    /// The plugins authorisers are made from.
    public let registry: AuthoriserRegistry
    /// How long a connect target (a host or a fallback) that failed to resolve or connect is skipped.
    public let fallbackCooldown: Duration

    let client: HTTPClient
    let ownsClient: Bool
    /// The protocol plugins every load's requests carry to the client (``Configuration/protocols``).
    let protocols: ProtocolRegistry
    /// How many redirects a load follows (each hop routed through the policy again) before it fails; 0 follows
    /// none.
    let maxRedirects: Int
    /// The largest body a load reads whole (``DataLoader/load(_:)`` and delegates that do not take chunks).
    let maxBodyBytes: Int
    /// The loads in flight, for a graceful shutdown (``shutdown(gracePeriod:)``).
    let loads = InFlightLoads()
    let environment: [String: String]
    /// The configuration's clock: every instant the loader reads and every wait it takes.
    let clock: LoaderClock
    /// Whether ``clock`` is the system's: then ``now()`` reads the monotonic clock without copying the clock (a copy
    /// of an enum with a class payload is a retain and a release, even of its empty case; a load reads the time
    /// about six times).
    private let onSystemClock: Bool
    /// The clock's wall-clock reading, in seconds (what the cache stage, Retry-After dates and the authorisers read).
    let wallClock: @Sendable () -> Double
    private let current: Mutex<PolicyGraph>
    /// The rate limiter and the retry budgets, under one lock: an attempt's admission asks both at once.
    private let limits = Mutex(SharedLimits())
    private let cooldowns: Mutex<FallbackCooldownTable>
    /// Whether any connect target is cooling down: nearly never, so an attempt that worked asks this, not the lock.
    private let anyCoolingDown = Atomic<Bool>(false)
    private let observers = Mutex<[@Sendable (Consumption) -> Void]>([])
    private let tracers = Mutex<[@Sendable (LoaderEvent) -> Void]>([])
    /// How many observers of each kind were added (they are never removed): most services have none, and every
    /// load asks, so the answer "none" takes no lock.
    private let observerCount = Atomic<Int>(0)
    private let tracerCount = Atomic<Int>(0)
    private let requestCount = Atomic<UInt64>(0)
    /// Concurrent loads of the same cacheable request share one exchange (across the service's factories only
    /// when the request carries no credentials of a factory's user).
    let coalescer = RequestCoalescer()
    /// The stored responses being revalidated in the background (`stale-while-revalidate`), by record key: one
    /// revalidation each, however many loads find them stale meanwhile.
    private let backgroundRevalidations = Mutex<Set<String>>([])
    private let origin: Deadline
    private let instruments: LoaderInstruments
    /// The HTTP cache (nil: none was asked for; a failure: the directory could not be opened, reported in the
    /// trace of each load that would have used it).
    let httpCache: Result<HTTPCache, CourierError>?
    /// The cache rules for hosts no service claims (nil: they are not cached).
    let unclaimedCache: CachePolicy?
    /// The link to the policy's coordination backend (nil: the policy the service started with has no
    /// `coordination` section).
    let fleet: FleetLink?
    /// The explicit proxy and the environment's (``Configuration/proxy``, ``Configuration/usesEnvironmentProxies``);
    /// a route's policy fills in the rest (DataLoaderService+Proxy.swift).
    let proxies: ProxySelection
    /// Whether any source may name a proxy outside the policy: when not, a route without `proxy:` asks nothing.
    let mayProxyOutsidePolicy: Bool
    /// The policy's `proxy:` settings with their secrets resolved, each once.
    let resolvedProxies = Mutex<[ProxyPolicy: ProxySelection.Choice]>([:])

    /// Makes a service from a compiled graph.
    ///
    /// - Parameters:
    ///   - graph: the compiled policy.
    ///   - configuration: everything else (``Configuration``).
    ///   - client: the transport; by default the service makes its own, on an event loop of its own, and shuts
    ///     both down in ``shutdown(gracePeriod:)`` or when freed (a client passed in stays the caller's to shut
    ///     down).
    public init(graph: PolicyGraph, configuration: Configuration, client: HTTPClient? = nil) {
        self.current = Mutex(graph)
        self.userAgent = configuration.userAgent
        self.registry = configuration.registry
        self.environment = configuration.environment
        self.client = client ?? DataLoaderService.makeOwnClient(logger: configuration.logger, metricsFactory: configuration.metricsFactory)
        self.ownsClient = client == nil
        self.protocols = configuration.protocols
        self.maxRedirects = max(0, configuration.maxRedirects)
        self.maxBodyBytes = max(0, configuration.maxBodyBytes)
        self.fallbackCooldown = configuration.fallbackCooldown
        self.cooldowns = Mutex(FallbackCooldownTable(cooldown: configuration.fallbackCooldown))
        let clock = configuration.clock
        self.clock = clock
        self.onSystemClock = clock.manualClock == nil
        self.origin = clock.now()
        self.wallClock = { clock.wallSeconds() }
        self.instruments = LoaderInstruments(
            logger: configuration.logger, metricsFactory: configuration.metricsFactory, tracer: configuration.tracer
        )
        self.fleet = graph.coordination.map {
            FleetLink.make(
                $0, secrets: .system(environment: configuration.environment), logger: configuration.logger,
                metricsFactory: configuration.metricsFactory
            )
        }
        (self.proxies, self.mayProxyOutsidePolicy) = DataLoaderService.proxySelection(configuration)
        let unclaimed = configuration.cachingUnclaimedHosts
        self.unclaimedCache = unclaimed
        self.httpCache = configuration.cacheDirectory.map { directory in
            let caps = graph.services.compactMap(\.cache?.maxSize) + [unclaimed?.maxSize].compactMap { $0 }
            return DataLoaderService.openCache(directory, sizeCap: caps.isEmpty ? nil : caps.reduce(0, +), clock: clock.wall)
        }
    }

    /// Opens the HTTP cache's record store, collecting its garbage every 5 minutes.
    private static func openCache(_ directory: String, sizeCap: Int64?, clock: WallClock) -> Result<HTTPCache, CourierError> {
        var options = RecordStoreOptions(directory: directory)
        options.sizeCap = sizeCap
        options.clock = clock
        do {
            let store = try RecordStore(options: options)
            store.startCollectingGarbage(every: .seconds(300))
            return .success(HTTPCache(store: store))
        } catch {
            return .failure(CourierError(.cache, "the HTTP cache in '\(directory)' could not be opened: \(error)", cause: error))
        }
    }

    /// Makes a service from a policy file, compiled with the configuration's registry.
    ///
    /// - Throws: ``PolicyLoadError`` with the compiler's diagnostics when the file has errors.
    public convenience init(policyFile path: String, configuration: Configuration, client: HTTPClient? = nil) throws(PolicyLoadError) {
        let compilation = PolicyCompiler(registry: configuration.registry).compile(file: path)
        guard !compilation.hasErrors, let graph = compilation.graph else {
            throw PolicyLoadError(path: path, diagnostics: compilation.diagnostics)
        }
        self.init(graph: graph, configuration: configuration, client: client)
    }

    deinit {
        if ownsClient { client.shutdown() }
    }

    /// Starts what the service needs before its first load: today, the policy's coordination backend (it
    /// connects, authenticates, checks the database and registers this instance in the fleet's live set,
    /// docs/fleet.md). Loads start it themselves when this is not called; calling it at start-up makes a wrong
    /// password or an unreachable Redis an error there instead of a degraded first load. Without a `coordination`
    /// section it does nothing. Calling it again after it succeeded does nothing.
    ///
    /// - Throws: a `coordination` `CourierError` naming the backend and saying what failed.
    public func start() async throws(CourierError) {
        try await fleet?.start()
    }

    /// The graph new requests use.
    public var graph: PolicyGraph { current.withLock { $0 } }

    /// Swaps the policy graph atomically. Requests already started keep the graph they took.
    public func reload(_ graph: PolicyGraph) {
        current.withLock { $0 = graph }
    }

    /// Makes the loader factory for one user.
    ///
    /// - Parameters:
    ///   - environment: extra `${env:…}` values for this user's authorisers, over the service's.
    ///   - cacheIdentity: who this user is to the HTTP cache: responses to requests with credentials (an
    ///     authoriser's, or the request's own `Authorization`) are filed under it and only ever served to a
    ///     factory with the same identity. Give a stable identity (an account id) for them to outlive the
    ///     process; nil (the default) makes a random one, so such responses are this factory's alone.
    public func makeFactory(environment: [String: String] = [:], cacheIdentity: String? = nil) -> DataLoaderFactory {
        DataLoaderFactory(
            service: self, environment: self.environment.merging(environment) { $1 },
            cacheIdentity: cacheIdentity ?? RequestExecution.makeIdempotencyKey()
        )
    }

    /// Claims the background revalidation of the stored response under `recordKey`; false when one is under way.
    func beginBackgroundRevalidation(_ recordKey: String) -> Bool {
        backgroundRevalidations.withLock { $0.insert(recordKey).inserted }
    }

    /// The background revalidation of `recordKey` is over.
    func endBackgroundRevalidation(_ recordKey: String) {
        _ = backgroundRevalidations.withLock { $0.remove(recordKey) }
    }

    /// The cache rules that apply to `route` (its service's `cache:`, or those for unclaimed hosts).
    func cachePolicy(for route: Route) -> CachePolicy? {
        route.serviceName == nil ? unclaimedCache : route.cache
    }

    /// Whether any cache rules apply to `route` (``cachePolicy(for:)`` is not nil), without copying them.
    func caches(_ route: Route) -> Bool {
        route.serviceName == nil ? unclaimedCache != nil : route.hasCachePolicy
    }

    /// The time on the service's clock.
    @inline(__always)
    func now() -> Deadline {
        onSystemClock ? Deadline.now() : clock.now()
    }

    /// `deadline` (on the service's clock) for the transport, in real time (``LoaderClock`` `realDeadline(_:)`).
    @inline(__always)
    func realDeadline(_ deadline: Deadline) -> Deadline {
        onSystemClock ? deadline : clock.realDeadline(deadline)
    }

    /// Adds an observer called with the wire traffic of every finished request (on the request's task).
    public func addConsumptionObserver(_ observer: @escaping @Sendable (Consumption) -> Void) {
        observers.withLock { $0.append(observer) }
        observerCount.add(1, ordering: .releasing)
    }

    /// Adds an observer called with every decision the loader makes (``LoaderEvent``), as it makes it, on the
    /// request's task: keep it quick. Events of one request arrive in order.
    public func addTraceObserver(_ observer: @escaping @Sendable (LoaderEvent) -> Void) {
        tracers.withLock { $0.append(observer) }
        tracerCount.add(1, ordering: .releasing)
    }

    // MARK: - For the loaders

    /// A tracer for a new request: its service-wide number, the trace observers registered now, and its
    /// instrumentation (called on the task that asked for the load, whose trace context is the span's parent).
    func makeTracer(for request: Request) -> LoaderTracer {
        let number = requestCount.add(1, ordering: .relaxed).newValue
        let observers = tracerCount.load(ordering: .acquiring) == 0 ? [] : tracers.withLock { $0 }
        return LoaderTracer(
            request: number, url: request.url, observers: observers, clock: clock,
            instrumentation: instruments.begin(
                request: number, url: request.url, method: request.method, logger: request.logger, clock: clock
            )
        )
    }

    /// Hands `consumption` to the consumption observers; made only when there are some.
    func report(_ consumption: @autoclosure () -> Consumption) {
        guard observerCount.load(ordering: .acquiring) > 0 else { return }
        let observers = observers.withLock { $0 }
        let made = consumption()
        for observer in observers { observer(made) }
    }

    /// Admits an attempt: reserves a rate-limit slot for `key` and, for a request's first attempt on a route with
    /// a retry budget (`budget` not nil), counts the request in the budget of its `service`; returns when the
    /// attempt may go. One lock for both, the one every attempt of every load takes.
    @inline(never)
    func admit(key: EndpointKey, limit: RateLimit?, now: Deadline, service: String, budget: RetryPolicy.Budget?) -> Deadline {
        let key = key.description
        return limits.withLock { $0.admit(key: key, limit: limit, now: now, service: service, budget: budget, origin: origin) }
    }

    /// Admits an attempt under this process's share of a fleet limit (`on-unavailable: local`), kept apart from
    /// the process's own limit of the same endpoint key.
    func admitLocalShare(key: EndpointKey, limit: RateLimit, now: Deadline) -> Deadline {
        let key = "fleet-share " + key.description
        return limits.withLock { $0.limiter.admit(key: key, limit: limit, now: now) }
    }

    /// Pauses `key` until `until` (a Retry-After).
    func pause(key: EndpointKey, until: Deadline) {
        limits.withLock { $0.limiter.pause(key: key.description, until: until) }
    }

    /// The instant `key` is paused until, if any (for Courier's tests: no part of the public API).
    package func pausedUntil(_ key: EndpointKey) -> ContinuousClock.Instant? {
        limits.withLock { $0.limiter.pausedUntil(key: key.description) }
    }

    /// Asks the service's budget for one retry (always yes when the route has no budget).
    func tryRetry(service: String, budget: RetryPolicy.Budget?, now: Deadline) -> Bool {
        guard let budget else { return true }
        return limits.withLock { $0.tryRetry(service: service, budget: budget, now: now, origin: origin) }
    }

    func isCoolingDown(_ target: String, now: Deadline) -> Bool {
        guard anyCoolingDown.load(ordering: .acquiring) else { return false }
        return cooldowns.withLock { $0.isCoolingDown(target, now: now) }
    }

    func markFailed(_ target: String, now: Deadline) {
        cooldowns.withLock { table in
            table.markFailed(target, now: now)
            anyCoolingDown.store(true, ordering: .releasing)
        }
    }

    func markWorking(_ target: String) {
        guard anyCoolingDown.load(ordering: .acquiring) else { return }
        cooldowns.withLock { table in
            table.markWorking(target)
            anyCoolingDown.store(!table.isEmpty, ordering: .releasing)
        }
    }
}

/// The service's rate limiter and retry budgets (one per service name), kept under one lock.
private struct SharedLimits {
    var limiter = RateLimiterStateMachine()
    var budgets: [String: RetryBudgetStateMachine] = [:]

    /// See ``DataLoaderService/admit(key:limit:now:service:budget:)``; `origin` is where the budgets' windows start.
    mutating func admit(
        key: String, limit: RateLimit?, now: Deadline, service: String, budget: RetryPolicy.Budget?, origin: Deadline
    ) -> Deadline {
        if let budget {
            withBudget(of: service, budget, origin: origin) { $0.recordRequest(now: now) }
        }
        return limiter.admit(key: key, limit: limit, now: now)
    }

    /// Asks `service`'s budget for one retry.
    mutating func tryRetry(service: String, budget: RetryPolicy.Budget, now: Deadline, origin: Deadline) -> Bool {
        withBudget(of: service, budget, origin: origin) { $0.tryRetry(now: now) }
    }

    /// Changes `service`'s budget in place (made on first use): a copy taken out of the table and put back would
    /// copy its bucket arrays, and `budgets[service, default: …]` hands its default to the dictionary's accessor
    /// coroutine, whose frame then holds that closure on the heap (two `malloc`s per load).
    private mutating func withBudget<R>(
        of service: String, _ budget: RetryPolicy.Budget, origin: Deadline, _ body: (inout RetryBudgetStateMachine) -> R
    ) -> R {
        if let index = budgets.index(forKey: service) { return body(&budgets.values[index]) }
        var fresh = RetryBudgetStateMachine(budget: budget, origin: origin)
        let result = body(&fresh)
        budgets[service] = fresh
        return result
    }
}
