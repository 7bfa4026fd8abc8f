import DequeModule

/// Decides, for one pool key (scheme, host, port and TLS settings), which request gets which connection.
///
/// Pure: events in, actions out; the pool owner opens and closes sockets, arms timers and resumes callers.
/// Rules:
/// - at most ``Configuration/maxConnections`` connections exist at once (connecting, leased or idle);
/// - requests that cannot be served wait in FIFO order, and a connection that becomes free goes to the oldest
///   waiter first (fairness), so idle connections and waiting requests never coexist;
/// - the most recently used idle connection is leased first (it is the least likely to have been closed by
///   the server), and every parked connection gets an idle timer tagged with a generation number so a timer
///   armed for an earlier idle period cannot close a connection that has since been reused and parked again.
public struct ConnectionPoolStateMachine: Sendable {
    public typealias RequestID = UInt64
    public typealias ConnectionID = UInt64

    public struct Configuration: Hashable, Sendable {
        /// Connections per key, in any state.
        public var maxConnections: Int
        public init(maxConnections: Int) {
            precondition(maxConnections > 0, "a pool needs room for at least one connection")
            self.maxConnections = maxConnections
        }
    }

    /// What to do for a request.
    public enum RequestAction: Hashable, Sendable {
        case none
        /// Give this connection to this request.
        case lease(ConnectionID, to: RequestID)
        /// The request waited for a connection that could not be made: fail it with the connect error.
        case failWithConnectError(RequestID)
        /// The request is no longer waiting (cancelled); resume it with the cancellation.
        case cancelled(RequestID)
    }

    /// What to do with connections.
    public enum ConnectionAction: Hashable, Sendable {
        case none
        /// Start connecting a new connection with this id.
        case create(ConnectionID)
        /// Close this connection.
        case close(ConnectionID)
        /// The connection is now idle: arm its idle timer with this generation.
        case park(ConnectionID, generation: UInt64)
        /// Close one connection and start another (a broken connection replaced for a waiter).
        case closeAndCreate(close: ConnectionID, create: ConnectionID)
    }

    public struct Action: Hashable, Sendable {
        public var request: RequestAction
        public var connection: ConnectionAction
        init(_ request: RequestAction = .none, _ connection: ConnectionAction = .none) {
            self.request = request
            self.connection = connection
        }
    }

    private struct Idle: Hashable, Sendable {
        var id: ConnectionID
        var generation: UInt64
    }

    private let configuration: Configuration
    private var nextConnectionID: ConnectionID
    private var generation: UInt64 = 0
    private var connecting: Set<ConnectionID> = []
    private var leased: Set<ConnectionID> = []
    /// Most recently parked last.
    private var idle: [Idle] = []
    private var waiters: Deque<RequestID> = Deque()
    private var isShutDown = false

    /// - Parameter firstConnectionID: where this key's connection ids start (the owner keeps them unique
    ///   across keys).
    public init(configuration: Configuration, firstConnectionID: ConnectionID = 1) {
        self.configuration = configuration
        self.nextConnectionID = firstConnectionID
    }

    /// Connections in any state.
    public var connectionCount: Int { connecting.count + leased.count + idle.count }
    public var idleCount: Int { idle.count }
    public var waitingCount: Int { waiters.count }
    /// Whether the key has nothing left: the owner may drop it.
    public var isEmpty: Bool { connectionCount == 0 && waiters.isEmpty }
    /// Whether a request holds or waits for a connection, or a connection is being made (idle ones do not count):
    /// what a graceful shutdown waits for.
    public var isBusy: Bool { !leased.isEmpty || !connecting.isEmpty || !waiters.isEmpty }

    // MARK: - Events

    /// A request wants a connection.
    public mutating func requestConnection(_ request: RequestID) -> Action {
        precondition(!isShutDown, "the pool is shut down")
        if let conn = idle.popLast() {
            leased.insert(conn.id)
            return Action(.lease(conn.id, to: request))
        }
        waiters.append(request)
        return Action(.none, createIfNeeded())
    }

    /// A connection finished connecting.
    public mutating func connectionEstablished(_ connection: ConnectionID) -> Action {
        precondition(connecting.remove(connection) != nil, "connection \(connection) was not connecting")
        if isShutDown { return Action(.none, .close(connection)) }
        return hand(connection)
    }

    /// A connection failed to connect: the oldest waiter fails with the error (each connection attempt
    /// answers for one request, so a dead host cannot make waiters wait forever), and another connection is
    /// started if requests are still waiting without one.
    public mutating func connectionFailed(_ connection: ConnectionID) -> Action {
        precondition(connecting.remove(connection) != nil, "connection \(connection) was not connecting")
        guard let request = waiters.popFirst() else { return Action() }
        return Action(.failWithConnectError(request), createIfNeeded())
    }

    /// A leased connection came back. `reusable` is the HTTP/1.1 state machine's verdict (keep-alive, whole
    /// response read, no error).
    public mutating func connectionReleased(_ connection: ConnectionID, reusable: Bool) -> Action {
        precondition(leased.remove(connection) != nil, "connection \(connection) was not leased")
        if reusable && !isShutDown { return hand(connection) }
        let replacement = createIfNeeded()
        if case .create(let new) = replacement { return Action(.none, .closeAndCreate(close: connection, create: new)) }
        return Action(.none, .close(connection))
    }

    /// The owner found the connection it was just given closed by the server: close it and serve the same
    /// request again, ahead of everyone else.
    public mutating func leasedConnectionWasStale(_ connection: ConnectionID, request: RequestID) -> Action {
        precondition(leased.remove(connection) != nil, "connection \(connection) was not leased")
        if let next = idle.popLast() {
            leased.insert(next.id)
            return Action(.lease(next.id, to: request), .close(connection))
        }
        waiters.prepend(request)
        let replacement = createIfNeeded()
        if case .create(let new) = replacement { return Action(.none, .closeAndCreate(close: connection, create: new)) }
        return Action(.none, .close(connection))
    }

    /// An idle timer fired.
    public mutating func idleTimeout(_ connection: ConnectionID, generation: UInt64) -> Action {
        guard let index = idle.firstIndex(of: Idle(id: connection, generation: generation)) else { return Action() }
        idle.remove(at: index)
        return Action(.none, .close(connection))
    }

    /// The owner noticed an idle connection was closed by the server (e.g. readable EOF while parked).
    public mutating func idleConnectionClosed(_ connection: ConnectionID) -> Action {
        guard let index = idle.firstIndex(where: { $0.id == connection }) else { return Action() }
        idle.remove(at: index)
        return Action(.none, .close(connection))
    }

    /// A waiting request was cancelled. If it was still waiting it leaves the queue and is resumed with its
    /// cancellation; a request that already holds a connection is not affected here (it releases it).
    public mutating func cancelRequest(_ request: RequestID) -> Action {
        guard let index = waiters.firstIndex(of: request) else { return Action() }
        waiters.remove(at: index)
        return Action(.cancelled(request))
    }

    /// Closes idle connections and fails every waiter; leased and connecting connections are closed as they
    /// come back. Returns the idle connections to close and the waiters to fail.
    public mutating func shutdown() -> (close: [ConnectionID], fail: [RequestID]) {
        isShutDown = true
        let close = idle.map(\.id)
        idle.removeAll()
        var fail: [RequestID] = []
        while let w = waiters.popFirst() { fail.append(w) }
        return (close, fail)
    }

    // MARK: - Helpers

    /// Gives a free connection to the oldest waiter, or parks it.
    private mutating func hand(_ connection: ConnectionID) -> Action {
        if let request = waiters.popFirst() {
            leased.insert(connection)
            return Action(.lease(connection, to: request))
        }
        generation &+= 1
        idle.append(Idle(id: connection, generation: generation))
        return Action(.none, .park(connection, generation: generation))
    }

    /// Starts a connection when more requests wait than connections are being made and there is room.
    private mutating func createIfNeeded() -> ConnectionAction {
        guard !isShutDown, waiters.count > connecting.count, connectionCount < configuration.maxConnections else {
            return .none
        }
        let id = nextConnectionID
        nextConnectionID &+= 1
        connecting.insert(id)
        return .create(id)
    }
}
