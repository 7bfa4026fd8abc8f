import CourierCore
import Synchronization

/// A service's loads in flight, across all its loaders, for a graceful shutdown: each load enters when it starts
/// (or is refused once the service is shutting down) and leaves when its task ends; when the grace period ends,
/// those still running are cancelled through the function each gave.
final class InFlightLoads: Sendable {
    typealias Cancel = @Sendable (CourierError) -> Void

    private struct State: ~Copyable {
        var next = 0
        var cancels: [Int: Cancel] = [:]
    }

    private let state = Mutex(State())
    /// The shutdown's sequencing.
    let lifecycle = GracefulShutdown()

    /// Counts a load in flight and returns its ticket; nil when the service is shutting down (the load must fail
    /// with `shutdown`). `cancel` ends the load with the error it is given.
    func enter(cancel: @escaping Cancel) -> Int? {
        state.withLock { s -> Int? in
            guard lifecycle.isAcceptingRequests else { return nil }
            s.next += 1
            s.cancels[s.next] = cancel
            return s.next
        }
    }

    /// The load of `ticket` ended (its task returned).
    func leave(_ ticket: Int) {
        let empty = state.withLock { s -> Bool in
            s.cancels[ticket] = nil
            return s.cancels.isEmpty
        }
        if empty && !lifecycle.isAcceptingRequests { lifecycle.drained() }
    }

    /// Whether no load is in flight.
    var isEmpty: Bool { state.withLock { $0.cancels.isEmpty } }

    /// Ends every load in flight with `error` (their callers learn it at once; their tasks are cancelled).
    func cancelAll(with error: CourierError) {
        let cancels = state.withLock { $0.cancels.values.map { $0 } }
        for cancel in cancels { cancel(error) }
    }
}
