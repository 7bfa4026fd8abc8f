internal import Synchronization
internal import CourierCore

/// Lets concurrent loads of the same cacheable request share one exchange: the first to ask leads (it sends the
/// request and reports the outcome with ``finish(_:with:)``), the others follow (they wait for that outcome).
/// None of the peers does this; for a cache it means N views asking for the same resource at once cost one request.
///
/// A follower whose load is cancelled (its task, or its `CancellationScope`) stops waiting at once; a leader that
/// was cancelled hands its followers no outcome, so they run on their own (their callers did not cancel).
final class RequestCoalescer: Sendable {
    /// What a follower gets.
    enum Outcome {
        /// The leader's outcome.
        case shared(Result<Response, CourierError>)
        /// No outcome to share (the leader was cancelled, or finished before the follower joined): load alone.
        case runAlone
        /// The follower's own task was cancelled.
        case cancelled
    }

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Outcome, Never>
    }

    private struct State: ~Copyable {
        var groups: [String: [Waiter]] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// True: the caller leads for `key` and must call ``finish(_:with:)``; false: another load leads, follow it.
    func lead(_ key: String) -> Bool {
        state.withLock { s in
            guard s.groups[key] == nil else { return false }
            s.groups[key] = []
            return true
        }
    }

    /// Waits for the outcome of the load that leads for `key`.
    func follow(_ key: String) async -> Outcome {
        let id = state.withLock { s -> UInt64 in
            s.nextID &+= 1
            return s.nextID
        }
        return await CancellationScope.withCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                let immediate = state.withLock { s -> Outcome? in
                    if CancellationScope.isCancelled { return .cancelled }
                    guard s.groups[key] != nil else { return .runAlone }
                    s.groups[key]!.append(Waiter(id: id, continuation: continuation))
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: { [self] in
            let waiter = state.withLock { s -> Waiter? in
                guard let index = s.groups[key]?.firstIndex(where: { $0.id == id }) else { return nil }
                return s.groups[key]!.remove(at: index)
            }
            waiter?.continuation.resume(returning: .cancelled)
        }
    }

    /// The leader's outcome for `key`, handed to every follower (a cancellation is not: they run alone).
    func finish(_ key: String, with result: Result<Response, CourierError>) {
        let waiters = state.withLock { $0.groups.removeValue(forKey: key) ?? [] }
        var cancelled = false
        if case .failure(let error) = result, error.kind == .cancelled { cancelled = true }
        for waiter in waiters { waiter.continuation.resume(returning: cancelled ? .runAlone : .shared(result)) }
    }

    /// Loads following others right now (for tests).
    var followers: Int { state.withLock { $0.groups.values.reduce(0) { $0 + $1.count } } }
}
