internal import CourierCore
internal import DequeModule

extension ConnectionPoolStateMachine {
    /// One pool key's connections and waiting requests. The key's limit counts every connection, in any state.
    struct KeyState: Sendable {
        /// Most recently parked last: it is leased first, being the least likely to have been closed by the server.
        var idle: [ConnectionID] = []
        /// Oldest first (FIFO fairness).
        var waiters: Deque<Waiter> = []
        var connecting = 0
        var leased = 0

        var connectionCount: Int { connecting + leased + idle.count }
        /// Nothing left: the machine drops the key.
        var isEmpty: Bool { connectionCount == 0 && waiters.isEmpty }
        /// A request holds or waits for a connection, or one is being made (idle ones do not count): what a
        /// graceful shutdown waits for.
        var isBusy: Bool { leased > 0 || connecting > 0 || !waiters.isEmpty }
    }

    /// A request waiting for a connection.
    struct Waiter: Sendable {
        var request: RequestID
        /// By when a connection made for this request must be connected.
        var connectDeadline: Deadline
    }

    /// What the machine knows of one connection.
    struct ConnectionRecord: Sendable {
        enum Phase: Sendable {
            case connecting
            case leased
            case idle(since: Deadline)
        }

        let key: PoolKey
        var phase: Phase
        /// Whether an idle timer is armed for it. Timers are lazy: one armed for an earlier idle period stays
        /// armed while the connection is leased and parked again, and when it fires the machine closes the
        /// connection only if it has been idle for the whole idle timeout, asking for another timer otherwise.
        /// A busy connection thus costs no timer work per request.
        var hasIdleTimer = false
    }
}
