internal import CourierCore
internal import Synchronization

/// A service's loads in flight, across all its loaders, for a graceful shutdown: each load enters when it starts
/// (or is refused once the service is shutting down) and leaves when it ends; when the grace period ends, those
/// still running are ended through their loader's tracker.
final class InFlightLoads: Sendable {
    /// Where a load in flight is ended: its id in its loader's tracker (a pair, not a closure: no allocation per
    /// load).
    private struct Entry {
        let id: Int
        let tracker: LoadTracker
    }

    private struct State: ~Copyable {
        var next = 0
        var entries: [Int: Entry] = [:]
    }

    private let state = Mutex(State())
    /// The shutdown's sequencing.
    let lifecycle = GracefulShutdown()

    /// Counts load `id` of `tracker` in flight and returns its ticket; nil when the service is shutting down (the
    /// load must fail with `shutdown`).
    func enter(_ id: Int, of tracker: LoadTracker) -> Int? {
        state.withLock { s -> Int? in
            guard lifecycle.isAcceptingRequests else { return nil }
            s.next += 1
            s.entries[s.next] = Entry(id: id, tracker: tracker)
            return s.next
        }
    }

    /// The load of `ticket` ended (its task returned).
    func leave(_ ticket: Int) {
        let empty = state.withLock { s -> Bool in
            s.entries[ticket] = nil
            return s.entries.isEmpty
        }
        if empty && !lifecycle.isAcceptingRequests { lifecycle.drained() }
    }

    /// Whether no load is in flight.
    var isEmpty: Bool { state.withLock { $0.entries.isEmpty } }

    /// Ends every load in flight with `error` (their callers learn it at once; their tasks are cancelled).
    func cancelAll(with error: CourierError) {
        let entries = state.withLock { $0.entries.values.map { $0 } }
        for entry in entries { entry.tracker.cancel(entry.id, with: error) }
    }
}
