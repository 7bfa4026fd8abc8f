package import CoreMetrics
package import CourierCoordination
package import CourierCore
internal import CourierCrypto
internal import CourierRedis
package import Logging
internal import Synchronization

/// A service's link to its policy's coordination backend (issue 24; docs/fleet.md): the ``FleetCoordinator``
/// that shares fleet-scoped rate limits and Retry-After pauses, what a load does while Redis cannot be asked
/// (`on-unavailable`), and the shared token store the authorisers that opted in get.
///
/// Made once per service from the graph the service starts with (a reload keeps it: the backend is part of a
/// service's set-up, as its transport is). Its secrets (password, token key) are resolved then, from the
/// service's environment.
package final class FleetLink: Sendable {
    /// What the policy says a load does while Redis cannot be asked.
    let onUnavailable: CoordinationPolicy.Unavailable
    /// Nil when the link could not be made (``problem`` says why): every fleet admission then counts as Redis
    /// being unavailable.
    let coordinator: FleetCoordinator?
    /// Why the link could not be made: a secret that cannot be resolved, a token key that is not 32 bytes.
    let problem: CourierError?
    /// `host:port/db`, as errors and traces name the backend (never its password).
    package let backend: String
    /// The fleet's shared token store, for the authorisers with `share-tokens: true`; nil without a `token-key`.
    let tokenStore: RedisTokenStore?
    private let logger: Logger
    /// Whether a start has succeeded: every fleet admission asks, so it is an atomic, not the lock.
    private let started = Atomic<Bool>(false)
    /// One start at a time; a failed one may be retried, at most once a second by loads.
    private let starting = Mutex<StartState>(StartState())
    /// Whether the last admission found Redis unavailable: a transition is logged once, not every load.
    private let degraded = Atomic<Bool>(false)

    private struct StartState {
        var inFlight = false
        var lastAttempt: Deadline?
    }

    private init(
        policy: CoordinationPolicy, coordinator: FleetCoordinator?, problem: CourierError?, backend: String, tokenStore: RedisTokenStore?,
        logger: Logger
    ) {
        self.onUnavailable = policy.onUnavailable
        self.coordinator = coordinator
        self.problem = problem
        self.tokenStore = tokenStore
        self.backend = backend
        self.logger = logger
    }

    /// The link for `policy`, its secrets resolved through `secrets`. A secret that cannot be resolved or a
    /// token key that is not 32 bytes of base64 makes a link without a coordinator, whose ``problem`` (a
    /// `coordination` error naming the backend) ``start()`` throws.
    package static func make(
        _ policy: CoordinationPolicy, secrets: SecretResolver, logger: Logger, metricsFactory: any MetricsFactory = NOOPMetricsHandler.instance
    ) -> FleetLink {
        let redis = policy.redis
        let endpoint = redis.endpoint
        let backend = endpoint.description
        func failure(_ why: String, _ cause: (any Error & Sendable)? = nil) -> FleetLink {
            let problem = CourierError(.coordination, "the coordination backend \(backend) cannot be used: \(why)", cause: cause)
            return FleetLink(policy: policy, coordinator: nil, problem: problem, backend: backend, tokenStore: nil, logger: logger)
        }
        let username: String?
        let password: String?
        let tokenKey: [UInt8]?
        let tls: TLSPolicy?
        do {
            tls = try redis.tls.map { (t) throws(AuthoriserError) in try t.resolvingSecrets(secrets) }
            username = try redis.username.map { (s) throws(AuthoriserError) in try secrets.resolve(s) }
            password = try redis.password.map { (s) throws(AuthoriserError) in try secrets.resolve(s) }
            tokenKey = try redis.tokenKey.map { (s) throws(AuthoriserError) in Base64.decode(try secrets.resolve(s)) ?? [] }
        } catch {
            return failure(error.message, error)
        }
        let cipher: AES256GCM?
        do {
            cipher = try tokenKey.map { (key) throws(AES256GCMError) in try AES256GCM(key: key) }
        } catch {
            return failure("its token-key is not 32 bytes of base64 (it has \(tokenKey?.count ?? 0))")
        }
        let url = RedisURL(endpoint: endpoint, username: username, password: password)
        var configuration = RedisConfiguration(url: url, tls: tls ?? .builtIn, commandTimeout: redis.timeout)
        configuration.connectTimeout = max(configuration.connectTimeout, redis.timeout)
        let fleet = FleetConfiguration(redis: configuration, keys: FleetKeys(prefix: redis.keyPrefix))
        if let problem = fleet.problem { return failure(problem.message, problem) }
        let coordinator = FleetCoordinator(configuration: fleet)
        // On the coordinator's connection. Under on-unavailable: closed a token that cannot be shared fails the
        // load; otherwise it is refreshed in this process (docs/fleet.md says what that risks with rotation).
        let tokenStore = cipher.map {
            RedisTokenStore(
                client: coordinator.client, keys: fleet.keys, cipher: $0, fallback: policy.onUnavailable == .closed ? .failClosed : .local,
                observe: { outcome in
                    SharedTokenTrace.report(outcome)
                    logger.debug("courier: shared token \(outcome.rawValue)", metadata: ["backend": "\(backend)"])
                    metricsFactory.makeCounter(label: LoaderMetrics.sharedTokens, dimensions: [("outcome", outcome.rawValue)]).increment(by: 1)
                }
            )
        }
        return FleetLink(policy: policy, coordinator: coordinator, problem: nil, backend: backend, tokenStore: tokenStore, logger: logger)
    }

    /// Connects, checks the backend (authentication, database, scripts) and starts the heartbeat; a second call
    /// after one succeeded does nothing.
    func start() async throws(CourierError) {
        guard !started.load(ordering: .acquiring) else { return }
        guard let coordinator else { throw unusable }
        do {
            try await coordinator.start()
            started.store(true, ordering: .releasing)
        } catch {
            let failure = CourierError(.coordination, "the coordination backend \(backend) could not be started: \(error.kind.rawValue): \(error.message)", cause: error)
            logger.warning("courier: \(failure.message); on-unavailable: \(onUnavailable.rawValue)")
            throw failure
        }
    }

    /// Starts the link in the background when no start has succeeded (a service whose owner did not call
    /// ``DataLoaderService/start()``): at most one start at a time and one a second, so a Redis that is down
    /// costs a load nothing here.
    func startIfNeeded(now: Deadline) {
        guard coordinator != nil, !started.load(ordering: .acquiring) else { return }
        let go = starting.withLock { state -> Bool in
            if state.inFlight { return false }
            if let last = state.lastAttempt, now - last < .seconds(1) { return false }
            state.inFlight = true
            state.lastAttempt = now
            return true
        }
        guard go else { return }
        Task.detached { [self] in
            await CancellationScope.unscoped {
                // A failure is logged by start(); the next load tries again (at most once a second).
                try? await start()
                starting.withLock { $0.inFlight = false }
            }
        }
    }

    /// Notes whether Redis answered the last admission, logging each change once.
    func note(available: Bool, error: RedisError? = nil) {
        // Every fleet admission notes; only a change writes (the flag's cache line stays shared between cores).
        guard degraded.load(ordering: .relaxed) == available else { return }
        let was = degraded.exchange(!available, ordering: .acquiringAndReleasing)
        if was == available { return }
        if available {
            logger.notice("courier: the coordination backend \(backend) answers again; fleet limits are shared again")
        } else {
            logger.warning(
                "courier: the coordination backend \(backend) cannot be reached; on-unavailable: \(onUnavailable.rawValue)",
                metadata: ["error": "\(error?.message ?? "unavailable")"]
            )
        }
    }

    /// Stops the heartbeat and leaves the live set.
    func shutdown() async {
        await coordinator?.shutdown()
    }

    /// Counts a load for `key` arriving at `now`: nil when the link has no coordinator (``admit(_:limit:maxWait:)``
    /// then answers as a Redis that cannot be reached would); a slot this process leased may admit it at once.
    func arrive(_ key: EndpointKey, limit: RateLimit, now: Deadline) -> FleetArrival? {
        guard let coordinator else { return nil }
        startIfNeeded(now: now)
        return coordinator.arrive(endpointKey: key, limit: limit, now: now)
    }

    /// Reserves a slot of the fleet's `limit` for a load ``arrive(_:limit:now:)`` counted, within `maxWait`.
    func admit(_ arrival: FleetArrival?, limit: RateLimit, maxWait: Duration) async -> FleetAdmission {
        guard let coordinator, let arrival else { return .unavailable(unusableRedisError) }
        return await coordinator.admit(arrival, limit: limit, maxWait: maxWait)
    }

    /// Shares a pause of `key` for `duration` with the fleet.
    func pause(_ key: EndpointKey, limit: RateLimit, for duration: Duration) async -> Result<Void, RedisError> {
        guard let coordinator else { return .failure(unusableRedisError) }
        return await coordinator.pause(key, limit: limit, for: duration)
    }

    /// The fleet's live instances and rate-limit keys, read without writing and without joining the live set
    /// (`courier fleet status`).
    package func status(maxKeys: Int) async throws(CourierError) -> FleetStatus {
        guard let coordinator else { throw unusable }
        do {
            return try await coordinator.status(maxKeys: maxKeys)
        } catch {
            throw CourierError(.coordination, "the coordination backend \(backend) could not be read: \(error.kind.rawValue): \(error.message)", cause: error)
        }
    }

    /// Why a link without a coordinator cannot be used, for ``start()`` and ``status(maxKeys:)``.
    private var unusable: CourierError {
        problem ?? CourierError(.coordination, "the coordination backend \(backend) cannot be used")
    }

    /// The same as what Redis would answer a call, so that admissions and pauses follow `on-unavailable`.
    private var unusableRedisError: RedisError {
        RedisError(.configuration, unusable.message, backend: backend)
    }

    /// The live instances the last heartbeat counted (1 when none was ever counted).
    var liveInstances: Int { coordinator?.liveInstances ?? 1 }
}
