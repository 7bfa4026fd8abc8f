internal import CourierCore
internal import Synchronization

/// A service's loads in flight, across all its loaders, for a graceful shutdown: each load enters when it starts
/// (or is refused once the service is shutting down) and leaves when it ends; when the grace period ends, those
/// still running are ended through the trackers of the service's loaders.
///
/// Every load of the service passes here, so a load takes no lock: it is counted with one atomic operation on the
/// way in and one on the way out (the protocol `GracefulShutdown` describes: count, then check that requests are
/// still accepted). Which loads to end is the trackers' business: a loader's tracker is registered when the loader
/// is made and unregistered when it is freed, so the lock here is taken per loader, not per load.
final class InFlightLoads: Sendable {
    private let count = Atomic<Int>(0)
    private let trackers = Mutex<[ObjectIdentifier: LoadTracker]>([:])
    /// The shutdown's sequencing.
    let lifecycle = GracefulShutdown()

    /// Counts a load in flight; false when the service is shutting down (the load must fail with `shutdown`, and
    /// must not call ``leave()``).
    func enter() -> Bool {
        count.add(1, ordering: .sequentiallyConsistent)
        guard lifecycle.isAcceptingRequests else {
            leave()
            return false
        }
        return true
    }

    /// A load counted by ``enter()`` ended.
    func leave() {
        let left = count.subtract(1, ordering: .sequentiallyConsistent).newValue
        if left == 0 && !lifecycle.isAcceptingRequests { lifecycle.drained() }
    }

    /// Whether no load is in flight.
    var isEmpty: Bool { count.load(ordering: .sequentiallyConsistent) == 0 }

    /// A loader's tracker, whose loads a shutdown must be able to end; until ``unregister(_:)``.
    func register(_ tracker: LoadTracker) {
        trackers.withLock { $0[ObjectIdentifier(tracker)] = tracker }
    }

    /// The tracker of a loader that was freed (it has cancelled its loads).
    func unregister(_ tracker: LoadTracker) {
        _ = trackers.withLock { $0.removeValue(forKey: ObjectIdentifier(tracker)) }
    }

    /// Ends every load in flight with `error` (their callers learn it at once; their tasks are cancelled).
    func cancelAll(with error: CourierError) {
        let trackers = trackers.withLock { Array($0.values) }
        for tracker in trackers { tracker.cancelAll(with: error) }
    }
}
