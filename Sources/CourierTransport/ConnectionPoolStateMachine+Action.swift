internal import CourierCore

extension ConnectionPoolStateMachine {
    /// What the owner does after an event: something for requests, something for connections, and perhaps call
    /// the quiet callback. Every action carries what performing it needs; the owner decides nothing beside it.
    struct Action: Sendable {
        var request: RequestAction
        var connection: ConnectionAction
        /// No request holds or waits for a connection any more and none is being made: call the callback
        /// registered with ``ConnectionPoolStateMachine/notifyWhenQuiet()``.
        var notifiesQuiet: Bool

        init(_ request: RequestAction = .none, _ connection: ConnectionAction = .none) {
            self.request = request
            self.connection = connection
            self.notifiesQuiet = false
        }
    }

    /// What to do for waiting requests.
    enum RequestAction: Sendable {
        case none
        /// Resume the waiting request with this connection.
        case runRequest(RequestID, on: ConnectionID)
        /// Resume the waiting request with this failure.
        case failRequest(RequestID, Failure)
        /// Resume these waiting requests with this failure (a shutdown).
        case failRequests([RequestID], Failure)
    }

    /// What to do with connections.
    enum ConnectionAction: Sendable {
        case none
        /// Start connecting to `key`, done by `deadline` (the connect deadline of the request it is made for).
        case createConnection(ConnectionID, PoolKey, deadline: Deadline)
        /// The connection is idle: run ``ConnectionPoolStateMachine/idleTimerFired(_:now:)`` for it at this time.
        case scheduleIdleTimeout(ConnectionID, at: Deadline)
        /// Close this connection (and cancel its idle timer, if one is armed).
        case closeConnection(ConnectionID)
        /// Close this connection: it has been idle for the whole idle timeout.
        case closeIdleTimedOut(ConnectionID)
        /// Close one connection and start another (a broken connection replaced for a waiting request).
        case closeConnectionAndCreate(ConnectionID, create: ConnectionID, PoolKey, deadline: Deadline)
        /// Close these connections (the idle ones of a key, or all at a shutdown).
        case closeConnections([ConnectionID])
    }

    /// Why a request gets no connection.
    enum Failure: Sendable {
        /// The connection made for it failed: the resolver's, the socket's or the TLS handshake's own error.
        case connect(any Error)
        /// Its task was cancelled while it waited.
        case cancelled
        /// The pool was shut down while it waited.
        case shutDown
        /// It asked after the pool was shut down.
        case refused
    }

    /// The answer to ``ConnectionPoolStateMachine/leaseIdleConnection(key:)``, the hot path.
    enum IdleLease: Equatable, Sendable {
        /// This idle connection is the request's now.
        case leased(ConnectionID)
        /// None is idle: the request waits (``ConnectionPoolStateMachine/waitForConnection(_:key:connectDeadline:)``).
        case wait
        /// The pool is shut down.
        case refused
    }
}
