internal import CourierCore
internal import DequeModule

/// Decides, for every pool key (scheme, host, port and TLS settings), which request gets which connection, and
/// keeps all the pool's bookkeeping: each key's idle list, waiting requests and counts, each connection's phase and
/// idle timer, connection ids, and the connect deadline a new connection gets.
///
/// Pure: events in, actions out (``Action``); the time is a parameter of the events that need it, never read
/// here. The owner (``ConnectionPool``) runs it under a lock and performs the actions: it opens and closes sockets,
/// arms timers and resumes waiting requests. Rules:
/// - at most ``Configuration/maxConnectionsPerKey`` connections exist per key at once (connecting, leased or idle);
/// - requests that cannot be served wait in FIFO order per key, and a connection that becomes free goes to the
///   oldest waiter first (fairness), so a key's idle connections and waiting requests never coexist;
/// - the most recently used idle connection is leased first (it is the least likely to have been closed by the
///   server), and a connection idle for the whole idle timeout is closed;
/// - a connection is made with the connect deadline of the oldest waiter no connection in progress answers for,
///   and each connect attempt answers for one request: when it fails, the oldest waiter fails with its error, so a
///   dead host cannot make waiters wait forever.
struct ConnectionPoolStateMachine: Sendable {
    typealias RequestID = UInt64
    typealias ConnectionID = UInt64

    struct Configuration: Hashable, Sendable {
        /// Connections per key, in any state.
        var maxConnectionsPerKey: Int
        /// How long a connection may stay idle.
        var idleTimeout: Duration

        init(maxConnectionsPerKey: Int, idleTimeout: Duration) {
            precondition(maxConnectionsPerKey > 0, "a pool needs room for at least one connection")
            self.maxConnectionsPerKey = maxConnectionsPerKey
            self.idleTimeout = idleTimeout
        }
    }

    private let configuration: Configuration
    private var keys: [PoolKey: KeyState] = [:]
    private var connections: [ConnectionID: ConnectionRecord] = [:]
    private var nextConnectionID: ConnectionID = 1
    private var isShutDown = false
    /// Whether the owner waits for the pool to be quiet (``notifyWhenQuiet()``).
    private var wantsQuiet = false
    /// Connections connected and not closed (leased or idle), for the gauges.
    private(set) var openCount = 0
    /// Idle connections, for the gauges.
    private(set) var idleCount = 0

    init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// Requests waiting, over all keys (for tests).
    var waitingCount: Int { keys.values.reduce(0) { $0 + $1.waiters.count } }
    /// Connections in any state, over all keys (for tests).
    var connectionCount: Int { connections.count }
    /// One key's connections and waiting requests, nil when it has none (for tests).
    func state(of key: PoolKey) -> KeyState? { keys[key] }

    // MARK: - Leasing

    /// A request wants a connection for `key`: the most recently parked idle one, leased to it at once. The hot
    /// path: it touches no waiting list and needs no time.
    mutating func leaseIdleConnection(key: PoolKey) -> IdleLease {
        if isShutDown { return .refused }
        guard let index = keys.index(forKey: key), let id = leaseIdle(keyIndex: index) else { return .wait }
        return .leased(id)
    }

    /// A request that found no idle connection waits for one (the owner can resume it from now on). It is leased
    /// one that became idle meanwhile, or queued, and a connection is started for it when there is room.
    mutating func waitForConnection(_ request: RequestID, key: PoolKey, connectDeadline: Deadline) -> Action {
        if isShutDown { return Action(.failRequest(request, .refused)) }
        let index = keyIndex(key)
        if let id = leaseIdle(keyIndex: index) {
            return Action(.runRequest(request, on: id))
        }
        keys.values[index].waiters.append(Waiter(request: request, connectDeadline: connectDeadline))
        return Action(.none, createIfNeeded(keyIndex: index, key: key))
    }

    /// The owner found the connection it was just leased (``leaseIdleConnection(key:)``) closed by the server:
    /// close it, and serve the same request again ahead of everyone else.
    mutating func leasedConnectionWasStale(
        _ connection: ConnectionID, request: RequestID, connectDeadline: Deadline
    ) -> Action {
        if let record = connections.removeValue(forKey: connection), let index = keys.index(forKey: record.key) {
            keys.values[index].leased -= 1
            openCount -= 1
            guard !isShutDown else {
                dropIfEmpty(keyIndex: index)
                return finish(Action(.failRequest(request, .refused), .closeConnection(connection)))
            }
            if let next = leaseIdle(keyIndex: index) {
                return Action(.runRequest(request, on: next), .closeConnection(connection))
            }
            keys.values[index].waiters.prepend(Waiter(request: request, connectDeadline: connectDeadline))
            return Action(.none, close(connection, andCreate: createIfNeeded(keyIndex: index, key: record.key)))
        }
        // Closed by ``closeAll()`` meanwhile.
        return Action(.failRequest(request, .refused), .closeConnection(connection))
    }

    /// A waiting request was cancelled. If it still waits, it leaves the queue and is resumed with its
    /// cancellation; a request that already holds a connection is not affected (it releases it).
    mutating func cancelWaiter(_ request: RequestID, key: PoolKey) -> Action {
        guard let index = keys.index(forKey: key),
            let position = keys.values[index].waiters.firstIndex(where: { $0.request == request })
        else { return Action() }
        keys.values[index].waiters.remove(at: position)
        dropIfEmpty(keyIndex: index)
        return finish(Action(.failRequest(request, .cancelled)))
    }

    // MARK: - Connections

    /// A connection finished connecting: it goes to the oldest waiter, or is parked.
    mutating func connectionEstablished(_ connection: ConnectionID, now: Deadline) -> Action {
        guard let key = connections[connection]?.key, let index = keys.index(forKey: key) else { return Action() }
        keys.values[index].connecting -= 1
        if isShutDown {
            connections[connection] = nil
            dropIfEmpty(keyIndex: index)
            return finish(Action(.none, .closeConnection(connection)))
        }
        openCount += 1
        return finish(hand(connection, keyIndex: index, now: now))
    }

    /// A connection could not be made: the oldest waiter fails with `error` (the resolver's, the socket's or the
    /// TLS handshake's), and another connection is started if requests still wait without one.
    mutating func connectionFailed(_ connection: ConnectionID, error: any Error) -> Action {
        guard let key = connections.removeValue(forKey: connection)?.key, let index = keys.index(forKey: key) else {
            return Action()
        }
        keys.values[index].connecting -= 1
        var action = Action()
        if let waiter = keys.values[index].waiters.popFirst() { action.request = .failRequest(waiter.request, .connect(error)) }
        action.connection = createIfNeeded(keyIndex: index, key: key)
        dropIfEmpty(keyIndex: index)
        return finish(action)
    }

    /// A leased connection came back. `reusable` is the HTTP/1.1 state machine's verdict (keep-alive, whole
    /// response read, no error): a reusable one goes to the oldest waiter or is parked, another is closed (and
    /// replaced when requests wait without a connection).
    mutating func connectionReleased(_ connection: ConnectionID, reusable: Bool, now: Deadline) -> Action {
        // Unknown once ``closeAll()`` has closed it.
        guard let record = connections[connection], case .leased = record.phase, let index = keys.index(forKey: record.key)
        else { return Action() }
        let key = record.key
        keys.values[index].leased -= 1
        if reusable && !isShutDown { return finish(hand(connection, keyIndex: index, now: now)) }
        connections[connection] = nil
        openCount -= 1
        let replacement = createIfNeeded(keyIndex: index, key: key)
        dropIfEmpty(keyIndex: index)
        return finish(Action(.none, close(connection, andCreate: replacement)))
    }

    /// A connection's idle timer fired: close it if it has been idle for the whole idle timeout, ask for a timer
    /// for the rest of the period if it was parked again since, and leave it to the next park if it is leased.
    mutating func idleTimerFired(_ connection: ConnectionID, now: Deadline) -> Action {
        guard let record = connections[connection] else { return Action() }
        guard case .idle(let since) = record.phase else {
            updateRecord(connection) { $0.hasIdleTimer = false }
            return Action()
        }
        let due = since + configuration.idleTimeout
        if due > now { return Action(.none, .scheduleIdleTimeout(connection, at: due)) }
        guard let index = keys.index(forKey: record.key),
            let position = keys.values[index].idle.firstIndex(of: connection)
        else { return Action() }
        keys.values[index].idle.remove(at: position)
        connections[connection] = nil
        idleCount -= 1
        openCount -= 1
        dropIfEmpty(keyIndex: index)
        return Action(.none, .closeIdleTimedOut(connection))
    }

    /// Closes every idle connection of `key` (after a kept-alive connection turned out to be closed by the
    /// server, the others parked at the same time usually are too).
    mutating func closeIdleConnections(key: PoolKey) -> Action {
        guard let index = keys.index(forKey: key), !keys.values[index].idle.isEmpty else { return Action() }
        let idle = keys.values[index].idle
        keys.values[index].idle.removeAll()
        forget(idle)
        idleCount -= idle.count
        dropIfEmpty(keyIndex: index)
        return Action(.none, .closeConnections(idle))
    }

    // MARK: - Shutdown

    /// Closes idle connections and fails every waiter; later requests are refused, and leased and connecting
    /// connections are closed as they come back.
    mutating func shutdown() -> Action {
        isShutDown = true
        var close: [ConnectionID] = []
        var fail: [RequestID] = []
        for index in keys.indices {
            close += keys.values[index].idle
            fail += keys.values[index].waiters.lazy.map(\.request)
            keys.values[index].idle.removeAll()
            keys.values[index].waiters.removeAll()
        }
        forget(close)
        idleCount = 0
        keys = keys.filter { !$0.value.isEmpty }
        return finish(Action(fail.isEmpty ? .none : .failRequests(fail, .shutDown), close.isEmpty ? .none : .closeConnections(close)))
    }

    /// Ends everything: like ``shutdown()``, and leased connections are closed too (the requests on them fail at
    /// once). Connections still connecting are closed when they connect. The quiet callback, if one waits, is due.
    mutating func closeAll() -> Action {
        var action = shutdown()
        var close: [ConnectionID] = []
        if case .closeConnections(let idle) = action.connection { close = idle }
        for (id, record) in connections {
            if case .leased = record.phase { close.append(id) }
        }
        forget(close)
        for index in keys.indices { keys.values[index].leased = 0 }
        keys = keys.filter { !$0.value.isEmpty }
        openCount = 0
        action.connection = close.isEmpty ? .none : .closeConnections(close)
        action.notifiesQuiet = action.notifiesQuiet || wantsQuiet
        wantsQuiet = false
        return action
    }

    /// The owner wants to know when no request holds or waits for a connection and none is being made: at once
    /// (``Action/notifiesQuiet``) when that is so already, else with the action of the event that makes it so.
    mutating func notifyWhenQuiet() -> Action {
        wantsQuiet = true
        return finish(Action())
    }

    // MARK: - Helpers

    /// The index of `key`'s state, made when missing.
    private mutating func keyIndex(_ key: PoolKey) -> Dictionary<PoolKey, KeyState>.Index {
        if let index = keys.index(forKey: key) { return index }
        keys[key] = KeyState()
        return keys.index(forKey: key)!
    }

    /// Drops a key that has nothing left. Invalidates the key's index.
    private mutating func dropIfEmpty(keyIndex index: Dictionary<PoolKey, KeyState>.Index) {
        if keys.values[index].isEmpty { keys.remove(at: index) }
    }

    private mutating func lease(_ connection: ConnectionID, keyIndex index: Dictionary<PoolKey, KeyState>.Index) {
        keys.values[index].leased += 1
        updateRecord(connection) { $0.phase = .leased }
    }

    /// Leases the key's most recently parked idle connection, if any.
    private mutating func leaseIdle(keyIndex index: Dictionary<PoolKey, KeyState>.Index) -> ConnectionID? {
        guard let id = keys.values[index].idle.popLast() else { return nil }
        lease(id, keyIndex: index)
        idleCount -= 1
        return id
    }

    /// Gives a free connection to the oldest waiter, or parks it, asking for an idle timer unless one is armed.
    private mutating func hand(_ connection: ConnectionID, keyIndex index: Dictionary<PoolKey, KeyState>.Index, now: Deadline) -> Action {
        if let waiter = keys.values[index].waiters.popFirst() {
            lease(connection, keyIndex: index)
            return Action(.runRequest(waiter.request, on: connection))
        }
        keys.values[index].idle.append(connection)
        idleCount += 1
        guard let hadTimer = updateRecord(connection, { $0.park(since: now) }), !hadTimer else { return Action() }
        return Action(.none, .scheduleIdleTimeout(connection, at: now + configuration.idleTimeout))
    }

    /// Starts a connection when more requests wait than connections are being made and there is room; it is
    /// made for the oldest waiter no connection in progress answers for, with that waiter's connect deadline.
    private mutating func createIfNeeded(keyIndex index: Dictionary<PoolKey, KeyState>.Index, key: PoolKey) -> ConnectionAction {
        let connecting = keys.values[index].connecting
        guard !isShutDown, keys.values[index].waiters.count > connecting,
            keys.values[index].connectionCount < configuration.maxConnectionsPerKey
        else { return .none }
        let deadline = keys.values[index].waiters[connecting].connectDeadline
        let id = nextConnectionID
        nextConnectionID &+= 1
        keys.values[index].connecting += 1
        connections[id] = ConnectionRecord(key: key, phase: .connecting)
        return .createConnection(id, key, deadline: deadline)
    }

    private func close(_ connection: ConnectionID, andCreate replacement: ConnectionAction) -> ConnectionAction {
        guard case .createConnection(let id, let key, let deadline) = replacement else { return .closeConnection(connection) }
        return .closeConnectionAndCreate(connection, create: id, key, deadline: deadline)
    }

    /// Changes a connection's record in place. Through its index: the dictionary's optional-chained subscript
    /// (`connections[id]?.phase = …`) copies the large record into a coroutine frame that is allocated on the heap,
    /// two `malloc`s per change, on every lease and release.
    @discardableResult
    private mutating func updateRecord<R>(_ connection: ConnectionID, _ change: (inout ConnectionRecord) -> R) -> R? {
        guard let index = connections.index(forKey: connection) else { return nil }
        return change(&connections.values[index])
    }

    private mutating func forget(_ closed: [ConnectionID]) {
        for id in closed { connections[id] = nil }
    }

    /// Adds the quiet notification to `action` when the owner waits for it and no key is busy any more (checked
    /// only while someone waits: a graceful shutdown).
    private mutating func finish(_ action: Action) -> Action {
        guard wantsQuiet, !keys.values.contains(where: \.isBusy) else { return action }
        wantsQuiet = false
        var action = action
        action.notifiesQuiet = true
        return action
    }
}

extension ConnectionPoolStateMachine.ConnectionRecord {
    /// Marks the connection idle from `now` and its timer armed; returns whether a timer was armed already.
    mutating func park(since now: Deadline) -> Bool {
        phase = .idle(since: now)
        defer { hasIdleTimer = true }
        return hasIdleTimer
    }
}
