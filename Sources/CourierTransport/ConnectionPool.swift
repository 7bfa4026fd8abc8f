import CourierCore
import CourierHTTP1
import CourierPosix
import Synchronization

/// Owns the connections of an ``HTTPClient``: one ``ConnectionPoolStateMachine`` per pool key, run under a lock,
/// with the machines' actions performed outside it (connect, close, arm idle timers, resume waiting requests).
final class ConnectionPool: Sendable {
    typealias RequestID = ConnectionPoolStateMachine.RequestID
    typealias ConnectionID = ConnectionPoolStateMachine.ConnectionID

    private struct State: ~Copyable {
        var machines: [PoolKey: ConnectionPoolStateMachine] = [:]
        var keyBases: [PoolKey: UInt64] = [:]
        var nextKeyBase: UInt64 = 1
        var connections: [ConnectionID: HTTP1Connection] = [:]
        var waiters: [RequestID: CheckedContinuation<HTTP1Connection, any Error>] = [:]
        /// Outcomes that arrived before the waiting request registered its continuation.
        var early: [RequestID: Result<HTTP1Connection, any Error>] = [:]
        /// The connect timeout asked for by the request that made a connection necessary.
        var connectTimeouts: [PoolKey: Duration] = [:]
        var idleTimers: [ConnectionID: (loop: EventLoop, timer: TimerID)] = [:]
        var nextRequestID: RequestID = 1
        var isShutDown = false
    }

    /// A deferred effect, performed after the lock is released.
    private enum Effect {
        case resume(RequestID, Result<HTTP1Connection, any Error>)
        case connect(ConnectionID, PoolKey, Duration)
        case close(HTTP1Connection)
        case armIdleTimer(ConnectionID, generation: UInt64)
        case cancelTimer(EventLoop, TimerID)
    }

    private let state = Mutex(State())
    private let configuration: HTTPClientConfiguration
    private let loops: EventLoopGroup
    private let resolver: Resolver

    init(configuration: HTTPClientConfiguration, loops: EventLoopGroup, resolver: Resolver) {
        self.configuration = configuration
        self.loops = loops
        self.resolver = resolver
    }

    // MARK: - Leasing

    /// A connection for `key`: an idle one (checked for a server-side close first), a new one, or the next one
    /// freed, in FIFO order with other waiting requests. Cancellation of the waiting task resumes it at once.
    func lease(_ key: PoolKey, connectTimeout: Duration) async throws -> HTTP1Connection {
        let request = state.withLock { s -> RequestID in
            let id = s.nextRequestID
            s.nextRequestID &+= 1
            return id
        }
        while true {
            let effects = state.withLock { s -> [Effect] in
                guard !s.isShutDown else { return [.resume(request, .failure(CourierError(.cancelled, "the client was shut down")))] }
                s.connectTimeouts[key] = connectTimeout
                var machine = s.machines[key] ?? newMachine(for: key, in: &s)
                let action = machine.requestConnection(request)
                s.machines[key] = machine
                return translate(action, key: key, in: &s)
            }
            // Fast path: an idle connection was leased to us at once.
            if effects.count == 1, case .resume(request, .success(let connection)) = effects[0] {
                state.withLock { s in _ = s.early.removeValue(forKey: request) }
                let stream = connection.stream
                if !stream.isQuietSinceLastRead() && (stream.isClosedByPeer() || stream.hasPendingInput()) {
                    let more = state.withLock { s -> [Effect] in
                        var machine = s.machines[key]!
                        let action = machine.leasedConnectionWasStale(connection.id, request: request)
                        s.machines[key] = machine
                        s.connections[connection.id] = nil
                        return [.close(connection)] + translate(action, key: key, in: &s)
                    }
                    perform(more)
                    // The request is queued again (or was handed another idle connection): wait below.
                    return try await wait(for: request, key: key)
                }
                return connection
            }
            perform(effects)
            return try await wait(for: request, key: key)
        }
    }

    private func wait(for request: RequestID, key: PoolKey) async throws -> HTTP1Connection {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTP1Connection, any Error>) in
                let ready = state.withLock { s -> Result<HTTP1Connection, any Error>? in
                    if let result = s.early.removeValue(forKey: request) { return result }
                    s.waiters[request] = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            let effects = state.withLock { s -> [Effect] in
                guard var machine = s.machines[key] else { return [] }
                let action = machine.cancelRequest(request)
                s.machines[key] = machine
                return translate(action, key: key, in: &s)
            }
            perform(effects)
        }
    }

    /// Gives a connection back. `reusable` is the connection state machine's verdict.
    func release(_ connection: HTTP1Connection, reusable: Bool) {
        let effects = state.withLock { s -> [Effect] in
            guard var machine = s.machines[connection.key] else { return [.close(connection)] }
            let action = machine.connectionReleased(connection.id, reusable: reusable)
            s.machines[connection.key] = machine
            return translate(action, key: connection.key, in: &s)
        }
        perform(effects)
    }

    /// Closes every idle connection of `key` (after a kept-alive connection turned out to be closed by the
    /// server, the others parked at the same time usually are too).
    func closeIdle(_ key: PoolKey) {
        let effects = state.withLock { s -> [Effect] in
            guard var machine = s.machines[key] else { return [] }
            var out: [Effect] = []
            let idle = s.connections.values.filter { $0.key == key && s.idleTimers[$0.id] != nil }
            for connection in idle {
                out += translate(machine.idleConnectionClosed(connection.id), key: key, in: &s)
            }
            s.machines[key] = machine
            return out
        }
        perform(effects)
    }

    /// Closes idle connections, fails waiting requests; leased connections close as they come back.
    func shutdown() {
        let effects = state.withLock { s -> [Effect] in
            s.isShutDown = true
            var out: [Effect] = []
            for (key, var machine) in s.machines {
                let (close, fail) = machine.shutdown()
                s.machines[key] = machine
                for id in close { if let c = s.connections.removeValue(forKey: id) { out.append(.close(c)) } }
                for r in fail { out.append(.resume(r, .failure(CourierError(.cancelled, "the client was shut down")))) }
            }
            return out
        }
        perform(effects)
    }

    /// Open connections (for tests and metrics).
    var openConnectionCount: Int { state.withLock { $0.connections.count } }

    // MARK: - Actions

    private func newMachine(for key: PoolKey, in s: inout State) -> ConnectionPoolStateMachine {
        let base = s.keyBases[key] ?? {
            let b = s.nextKeyBase << 32
            s.nextKeyBase += 1
            s.keyBases[key] = b
            return b
        }()
        return ConnectionPoolStateMachine(
            configuration: .init(maxConnections: configuration.maxConnectionsPerHost),
            firstConnectionID: base
        )
    }

    /// Turns a machine action into effects, updating the bookkeeping under the lock.
    private func translate(_ action: ConnectionPoolStateMachine.Action, key: PoolKey, in s: inout State) -> [Effect] {
        var out: [Effect] = []
        switch action.request {
        case .none: break
        case .lease(let id, let request):
            if let t = s.idleTimers.removeValue(forKey: id) { out.append(.cancelTimer(t.loop, t.timer)) }
            if let connection = s.connections[id] { out.append(.resume(request, .success(connection))) }
        case .failWithConnectError(let request):
            // The caller that reports the connect failure supplies the error (see connectFinished).
            out.append(.resume(request, .failure(CourierError(.connect, "could not connect to \(key)"))))
        case .cancelled(let request):
            out.append(.resume(request, .failure(CancellationError())))
        }
        switch action.connection {
        case .none: break
        case .create(let id):
            out.append(.connect(id, key, s.connectTimeouts[key] ?? configuration.timeouts.connect))
        case .close(let id):
            if let t = s.idleTimers.removeValue(forKey: id) { out.append(.cancelTimer(t.loop, t.timer)) }
            if let c = s.connections.removeValue(forKey: id) { out.append(.close(c)) }
        case .park(let id, let generation):
            out.append(.armIdleTimer(id, generation: generation))
        case .closeAndCreate(let old, let new):
            if let t = s.idleTimers.removeValue(forKey: old) { out.append(.cancelTimer(t.loop, t.timer)) }
            if let c = s.connections.removeValue(forKey: old) { out.append(.close(c)) }
            out.append(.connect(new, key, s.connectTimeouts[key] ?? configuration.timeouts.connect))
        }
        if s.machines[key]?.isEmpty == true { s.machines[key] = nil }
        return out
    }

    private func perform(_ effects: [Effect]) {
        for effect in effects {
            switch effect {
            case .resume(let request, let result):
                let continuation = state.withLock { s -> CheckedContinuation<HTTP1Connection, any Error>? in
                    if let c = s.waiters.removeValue(forKey: request) { return c }
                    s.early[request] = result
                    return nil
                }
                continuation?.resume(with: result)
            case .connect(let id, let key, let timeout):
                Task { await self.connect(id, key: key, timeout: timeout) }
            case .close(let connection):
                connection.stream.close()
            case .armIdleTimer(let id, let generation):
                let loop = loops.next()
                let timer = loop.scheduleTimer(in: configuration.idleTimeout) { [weak self] in
                    self?.idleTimerFired(id, generation: generation)
                }
                state.withLock { s in s.idleTimers[id] = (loop, timer) }
            case .cancelTimer(let loop, let timer):
                _ = loop.cancelTimer(timer)
            }
        }
    }

    private func idleTimerFired(_ id: ConnectionID, generation: UInt64) {
        let effects = state.withLock { s -> [Effect] in
            guard let connection = s.connections[id], var machine = s.machines[connection.key] else { return [] }
            s.idleTimers[id] = nil
            let action = machine.idleTimeout(id, generation: generation)
            s.machines[connection.key] = machine
            return translate(action, key: connection.key, in: &s)
        }
        perform(effects)
    }

    private func connect(_ id: ConnectionID, key: PoolKey, timeout: Duration) async {
        let clock = ContinuousClock()
        let start = clock.now
        let result: Result<HTTP1Connection, any Error>
        do {
            let addresses: [SocketAddress]
            if let literal = SocketAddress(ipAddress: key.connectHost, port: key.connectPort) {
                addresses = [literal]
            } else {
                addresses = try await resolver.resolve(host: key.connectHost, port: key.connectPort)
            }
            let resolved = clock.now
            let remaining = timeout - (resolved - start)
            guard remaining > .zero else {
                throw CourierError(.timeout, "resolving \(key.connectHost) used the whole connect timeout")
            }
            let tcp = try await TCPConnection.connect(to: addresses, timeout: remaining, on: loops.next())
            let connection = HTTP1Connection(
                id: id, key: key, stream: tcp, limits: configuration.parserLimits, readSize: configuration.readSize
            )
            connection.setup = (
                dns: SocketAddress(ipAddress: key.connectHost, port: key.connectPort) == nil ? resolved - start : .zero,
                connect: clock.now - resolved, tls: nil
            )
            result = .success(connection)
        } catch {
            result = .failure(error)
        }
        let effects = state.withLock { s -> [Effect] in
            guard var machine = s.machines[key] else {
                if case .success(let c) = result { return [.close(c)] }
                return []
            }
            let action: ConnectionPoolStateMachine.Action
            switch result {
            case .success(let connection):
                s.connections[id] = connection
                action = machine.connectionEstablished(id)
            case .failure:
                action = machine.connectionFailed(id)
            }
            s.machines[key] = machine
            var out = translate(action, key: key, in: &s)
            // A failed connect fails the request it answered for with the real error.
            if case .failure(let error) = result {
                out = out.map {
                    if case .resume(let r, .failure(let e as CourierError)) = $0, e.kind == .connect { return .resume(r, .failure(error)) }
                    return $0
                }
            }
            return out
        }
        perform(effects)
    }
}
