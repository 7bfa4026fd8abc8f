package import CourierCore
package import CourierRedis
internal import Synchronization

/// One instance's part in the fleet: shared rate limits (GCRA over Redis), shared Retry-After pauses, and a
/// heartbeat in the live set, all through one ``RedisClient`` (one pipelined connection).
///
/// Use: ``start()`` once (it checks the backend, registers the instance and starts the heartbeat), then
/// ``admit(endpointKey:limit:maxWait:)`` before each request to a fleet-limited endpoint key and
/// ``pause(endpointKey:limit:for:)`` on each Retry-After, and ``shutdown()`` at the end. Neither `admit` nor
/// `pause` throws: when Redis cannot be asked they say so (``FleetAdmission/unavailable(_:)``, a failed result),
/// and the caller applies its `on-unavailable` choice, with ``isAvailable`` and ``liveInstances`` (and
/// ``FleetShare/local(_:liveInstances:)``) at hand. ``status(maxKeys:)`` reads without writing and needs no
/// ``start()`` (a status reader should not call it: that would count it as an instance).
///
/// Every call has the Redis configuration's command timeout as its deadline; while Redis is down or hung, the
/// client's circuit breaker fails calls at once, without it (docs/fleet.md).
package final class FleetCoordinator: Sendable {
    private enum Phase: Equatable {
        case idle, starting, running, stopped
    }

    private struct State {
        var phase = Phase.idle
        var heartbeat: Task<Void, Never>?
        var liveInstances = 1
    }

    package let configuration: FleetConfiguration
    /// The one connection the coordinator uses; the fleet's token store shares it.
    package let client: RedisClient
    private let state = Mutex(State())
    private let batches = FleetAdmissionBatches()
    /// Redis key names by endpoint key and limit: a name holds a SHA-256 of the limit's settings and a formatted
    /// rate, several microseconds of work that every admission would otherwise repeat (`perf` at 64 loads in
    /// flight). A policy has few endpoint keys; the table is emptied if a caller makes it grow past 10,000.
    private let keyNames = Mutex<[KeyName: String]>([:])

    private struct KeyName: Hashable {
        let endpointKey: EndpointKey
        let limit: RateLimit
    }

    /// The rate-limit hash of `endpointKey` under `limit` (``FleetKeys/rateLimit(endpointKey:limit:)``), made once;
    /// looked up by the endpoint key's parts, so that a load does not build its description.
    private func rateLimitKey(_ endpointKey: EndpointKey, _ limit: RateLimit) -> String {
        let name = KeyName(endpointKey: endpointKey, limit: limit)
        if let known = keyNames.withLock({ $0[name] }) { return known }
        let made = configuration.keys.rateLimit(endpointKey: endpointKey.description, limit: limit)
        keyNames.withLock { table in
            if table.count >= 10_000 { table.removeAll() }
            table[name] = made
        }
        return made
    }

    /// A coordinator for `configuration`; nothing is sent before the first call.
    package init(configuration: FleetConfiguration) {
        self.configuration = configuration
        self.client = RedisClient(configuration: configuration.redis)
    }

    deinit {
        // Dropped without shutdown(): the heartbeat ends (it holds no reference to the coordinator), and the
        // instance lapses from the live set like one that crashed.
        state.withLock { $0.heartbeat }?.cancel()
        client.shutdown()
    }

    /// `host:port` of the backend, as errors name it.
    package var backend: String { client.backend }

    package var instanceID: String { configuration.instanceID }

    /// Connects to Redis and checks it (`AUTH` and `SELECT` as configured, then `PING`), registers this instance in
    /// the live set, and starts the heartbeat. Calling it again once it succeeded does nothing.
    ///
    /// - Throws: ``RedisError`` naming the backend: ``RedisError/Kind-swift.enum/authentication`` for a wrong user
    ///   or password, ``RedisError/Kind-swift.enum/unavailable`` or ``RedisError/Kind-swift.enum/timeout`` for a
    ///   Redis that cannot be reached, ``RedisError/Kind-swift.enum/server`` when it refuses the scripts (an ACL
    ///   without `EVALSHA`), ``RedisError/Kind-swift.enum/configuration`` for an unusable configuration,
    ///   ``RedisError/Kind-swift.enum/shutdown`` after ``shutdown()``. A failed start may be tried again.
    package func start() async throws(RedisError) {
        if let problem = configuration.problem { throw problem }
        let phase = state.withLock { state -> Phase in
            defer { if state.phase == .idle { state.phase = .starting } }
            return state.phase
        }
        switch phase {
        case .idle: break
        case .starting, .running: return
        case .stopped: throw RedisError(.shutdown, "the fleet coordinator was shut down", backend: backend)
        }
        do {
            // The connection's set-up and the PING, within the connect timeout plus one command's.
            let deadline = Deadline.now() + configuration.redis.connectTimeout + configuration.redis.commandTimeout
            _ = try await client.send(RedisCommand("PING"), deadline: deadline)
            let count = try await heartbeat(deadline: deadline + configuration.redis.commandTimeout).get()
            state.withLock { $0.liveInstances = max(1, count) }
        } catch {
            state.withLock { if $0.phase == .starting { $0.phase = .idle } }
            throw error
        }
        let interval = configuration.heartbeatInterval
        let running = state.withLock { state -> Bool in
            guard state.phase == .starting else { return false }
            state.phase = .running
            // Detached: it inherits none of the caller's task-locals, and holds the coordinator only while renewing.
            state.heartbeat = Task.detached { [weak self] in
                while true {
                    do { try await Task.sleep(for: interval) } catch { return }
                    guard let coordinator = self else { return }
                    await coordinator.renewHeartbeat()
                }
            }
            return true
        }
        if !running { throw RedisError(.shutdown, "the fleet coordinator was shut down while it started", backend: backend) }
    }

    /// Stops the heartbeat, removes this instance from the live set (one command, within the command timeout; a
    /// Redis that cannot be reached lets it lapse instead), and closes the connection. Every later call fails with
    /// ``RedisError/Kind-swift.enum/shutdown``.
    package func shutdown() async {
        let (heartbeat, registered) = state.withLock { state in
            defer {
                state.phase = .stopped
                state.heartbeat = nil
            }
            return (state.heartbeat, state.phase == .running || state.phase == .starting)
        }
        heartbeat?.cancel()
        // No renewal may follow the removal: wait for one in flight to end.
        await heartbeat?.value
        if registered { _ = try? await client.send(RedisCommand("ZREM", configuration.keys.instances, configuration.instanceID)) }
        client.shutdown()
    }

    // MARK: - Rate limits and pauses

    /// Reserves the next slot of the fleet's `limit` for `endpointKey` (one script, one round trip), or says why not.
    ///
    /// Requests wait in the order their admissions reach Redis; a caller asks once per request and then sleeps
    /// for the returned wait. With `maxWait`, a wait longer than it reserves nothing
    /// (``FleetAdmission/wouldWaitTooLong(_:)``); nil accepts any wait. The same as ``arrive(endpointKey:limit:now:)``
    /// then ``admit(_:limit:maxWait:)``.
    package func admit(endpointKey: String, limit: RateLimit, maxWait: Duration?) async -> FleetAdmission {
        await admit(arrive(endpointKey: EndpointKey(host: endpointKey, pathPrefix: ""), limit: limit, now: .now()), limit: limit, maxWait: maxWait)
    }

    /// Counts a request for `endpointKey` arriving at `now`: a slot this process leased admits it at once
    /// (``FleetArrival/leased``, no call); otherwise ``admit(_:limit:maxWait:)`` must follow, with no other
    /// arrival for it in between.
    package func arrive(endpointKey: EndpointKey, limit: RateLimit, now: Deadline) -> FleetArrival {
        let key = rateLimitKey(endpointKey, limit)
        return FleetArrival(key: key, leased: batches.arrive(key: key, now: now))
    }

    /// The admission of a request ``arrive(endpointKey:limit:now:)`` counted: at once when a leased slot took it;
    /// otherwise one script call, shared with the requests for the same key that arrive while it is in flight.
    package func admit(_ arrival: FleetArrival, limit: RateLimit, maxWait: Duration?) async -> FleetAdmission {
        if arrival.leased { return .go(after: .zero) }
        let key = arrival.key
        // Requests for one key that arrive while a call for it is in flight go together in the next call.
        return await batches.admit(key: key, maxWait: maxWait, requestsPerSecond: limit.requestsPerSecond) { maxWaits in
            do throws(RedisError) {
                let reply = try await client.evaluate(
                    FleetScripts.admit, keys: [key], arguments: FleetScripts.admitArguments(limit: limit, maxWaits: maxWaits)
                )
                return FleetAdmission.batch(reply: reply, count: maxWaits.count, backend: backend)
            } catch {
                return Array(repeating: .unavailable(error), count: maxWaits.count)
            }
        }
    }

    /// Pauses `endpointKey`'s fleet limit for `duration` from now (a Retry-After any instance received), on
    /// Redis's clock; never shortens a pause already stored. A duration that is not positive changes nothing.
    package func pause(endpointKey: String, limit: RateLimit, for duration: Duration) async -> Result<Void, RedisError> {
        await pause(EndpointKey(host: endpointKey, pathPrefix: ""), limit: limit, for: duration)
    }

    /// ``pause(endpointKey:limit:for:)`` for an endpoint key as the loader holds it: its key name is the one its
    /// admissions looked up (``arrive(endpointKey:limit:now:)``), not made again.
    package func pause(_ endpointKey: EndpointKey, limit: RateLimit, for duration: Duration) async -> Result<Void, RedisError> {
        guard duration > .zero else { return .success(()) }
        let key = rateLimitKey(endpointKey, limit)
        batches.dropLeases(key)
        do {
            let reply = try await client.evaluate(FleetScripts.pause, keys: [key], arguments: FleetScripts.pauseArguments(limit: limit, duration: duration))
            guard reply.integer != nil else {
                return .failure(RedisError(.protocolViolation, "the pause script answered \(FleetAdmission.shape(of: reply)), not an integer", backend: backend))
            }
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    // MARK: - Live instances and availability

    /// The number of live instances the last heartbeat counted (this one included; at least 1). It stays at the
    /// last count while Redis cannot be reached.
    package var liveInstances: Int { state.withLock { $0.liveInstances } }

    /// Whether calls may reach Redis now: false while the client's circuit breaker is open (Redis down or hung,
    /// calls failing fast) and after shutdown.
    package var isAvailable: Bool {
        switch client.connectivity {
        case .idle, .connected, .connecting(_, probe: false): return true
        case .open, .connecting(_, probe: true), .shutDown: return false
        }
    }

    /// The fleet's live instances and rate-limit keys, read without writing (for `courier fleet status`); at most
    /// `maxKeys` keys. Each command's deadline is the command timeout, or 1 s if that is shorter.
    package func status(maxKeys: Int = 1_000) async throws(RedisError) -> FleetStatus {
        try await FleetStatus.read(
            client: client, keys: configuration.keys, maxKeys: max(1, maxKeys),
            timeout: max(configuration.redis.commandTimeout, .seconds(1))
        )
    }

    private func renewHeartbeat() async {
        // A failure (Redis down) changes nothing: the next interval tries again.
        if case .success(let count) = await heartbeat(deadline: .now() + configuration.redis.commandTimeout) {
            state.withLock { $0.liveInstances = max(1, count) }
        }
    }

    /// Renews this instance's heartbeat and counts the live instances.
    private func heartbeat(deadline: Deadline) async -> Result<Int, RedisError> {
        do {
            let reply = try await client.evaluate(
                FleetScripts.heartbeat, keys: [configuration.keys.instances],
                arguments: FleetScripts.heartbeatArguments(instanceID: configuration.instanceID, lapse: configuration.heartbeatLapse),
                deadline: deadline
            )
            guard let count = reply.integer, count >= 0 else {
                return .failure(RedisError(.protocolViolation, "the heartbeat script answered \(FleetAdmission.shape(of: reply)), not a count", backend: backend))
            }
            return .success(Int(clamping: count))
        } catch {
            return .failure(error)
        }
    }
}
