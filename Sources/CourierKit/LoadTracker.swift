internal import CourierCore
internal import Synchronization

/// A loader's requests in flight, of two kinds:
/// - A load awaited with ``DataLoader/load(_:)`` runs on its caller's task (``run(_:)``) under a
///   `CancellationScope` of its own. Cancelling it cancels the scope: every wait on its path answers the scope
///   as it answers task cancellation, so the caller resumes at once with the error, and the caller's task itself
///   is not cancelled. Such a load has no handle (only the whole loader's, or the service's, cancellation reaches
///   it), so it is kept in a slot, not under an id: taking and giving back a slot hashes nothing and, once the
///   loader has had as many loads at once as it will, allocates nothing. A scope nobody cancelled and nobody
///   else holds goes back to the tracker when its load ends, for the next load (a scope per load was a `malloc`
///   and a `free` per load).
/// - The others (streams, delegates, completions) run on a task of their own (``start(_:deliver:)``) plus the
///   function that delivers the outcome to whoever waits (a one-shot, a stream's channel). Cancelling one
///   cancels its task and delivers the error at once, whatever the task is doing; the delivery functions keep
///   only the first outcome. The tasks hold the tracker, never the loader, so a loader can be freed while they run.
///
/// The service counts every load in flight (``InFlightLoads``, for a graceful shutdown) and ends them through
/// the trackers of its loaders (``cancelAll(with:)``).
final class LoadTracker: Sendable {
    typealias Deliver = @Sendable (Result<Response, CourierError>) -> Void

    /// A request on a task of its own.
    private struct Entry {
        let task: Task<Void, Never>
        /// Hands its outcome over.
        let deliver: Deliver
        let url: String

        /// Ends the request with `error`: its waiter learns it at once.
        func end(with error: CourierError) {
            var error = error
            if error.url == nil { error.url = url }
            deliver(.failure(error))
            task.cancel()
        }
    }

    private struct State {
        var next = 0
        var entries: [Int: Entry] = [:]
        /// The scopes of the loads running on their callers' tasks, in slots that are reused (nil: free).
        var inline: [CancellationScope?] = []
        var freeSlots: [Int] = []
        /// Scopes of loads that ended uncancelled, for the next loads.
        var spareScopes: [CancellationScope] = []
        /// Requests started but not yet recorded, and those of them whose task already finished (an immediate
        /// task that never suspended).
        var starting: Set<Int> = []
        var finishedEarly: Set<Int> = []
        /// Requests a service's shutdown ended while they were still starting, and with which error.
        var endedWhileStarting: [Int: CourierError] = [:]
        var closed = false
    }

    private let state = Mutex(State())

    /// Runs `execution` on the caller's task and returns its outcome. Cancelling the loader's requests
    /// (``cancelAll(close:)``, the service's shutdown) or the caller's task ends it at once: the outcome is then
    /// the cancellation's error. When the loader is closed the request is not started and fails as `cancelled`;
    /// when the service is shutting down, as `shutdown`; when the caller's task is cancelled already, as
    /// `cancelled`, with nothing sent.
    nonisolated(nonsending) func run(_ execution: RequestExecution) async throws(CourierError) -> Response {
        let url = execution.request.url
        let loads = execution.factory.service.loads
        // Held by nothing but this load (a second reference would keep the scope from going back to the tracker).
        var taken: CancellationScope?
        let slot = state.withLock { s -> Int? in
            guard !s.closed else { return nil }
            let scope = s.spareScopes.popLast() ?? CancellationScope()
            taken = scope
            if let free = s.freeSlots.popLast() {
                s.inline[free] = scope
                return free
            }
            s.inline.append(scope)
            return s.inline.count - 1
        }
        guard let slot, var scope = taken.take() else {
            throw CourierError(.cancelled, "the loader was cancelled", url: url)
        }
        // Recorded before it is counted in the service's loads, so a shutdown's cancel always finds it.
        guard loads.enter() else {
            release(slot, &scope)
            throw CourierError(.shutdown, "the service is shutting down: the request was not sent", url: url)
        }
        defer { loads.leave() }
        // A cancellation that came before the request left the tracker wins, as the first outcome delivered
        // does for a request on a task of its own.
        func ended() -> CourierError? {
            // Read before the scope can go back to the tracker (only an uncancelled one does).
            let reason = scope.reason
            release(slot, &scope)
            guard var reason else { return nil }
            if reason.url == nil { reason.url = url }
            return reason
        }
        guard !Task.isCancelled else {
            throw ended() ?? CourierError(.cancelled, "the request was cancelled", url: url)
        }
        do {
            let response = try await CancellationScope.$current.withValue(scope) { () async throws(CourierError) -> Response in
                try await execution.run()
            }
            if let reason = ended() { throw reason }
            return response
        } catch {
            // `withValue` rethrows untyped: the error is the execution's `CourierError`.
            throw ended() ?? (error as? CourierError ?? CourierError(.cancelled, "the request was cancelled", url: url))
        }
    }

    /// Gives an inline load's slot back, and its scope for the next load when nobody cancelled it and nobody
    /// else holds it (a cancellation that took the scope to cancel it holds it until it is done).
    private func release(_ slot: Int, _ scope: inout CancellationScope) {
        state.withLock { s in
            s.inline[slot] = nil
            s.freeSlots.append(slot)
            if !scope.isCancelledNow, isKnownUniquelyReferenced(&scope) { s.spareScopes.append(scope) }
        }
    }

    /// Starts `execution` on a new task that hands its outcome to `deliver`; returns the request's id. When
    /// the loader is closed the request is not started and `deliver` gets a `cancelled` error at once; when the
    /// service is shutting down, a `shutdown` error.
    func start(_ execution: RequestExecution, deliver: @escaping Deliver) -> Int {
        let url = execution.request.url
        let loads = execution.factory.service.loads
        let (id, open) = state.withLock { s -> (Int, Bool) in
            s.next += 1
            if !s.closed { s.starting.insert(s.next) }
            return (s.next, !s.closed)
        }
        // Made only when needed: most requests are never refused.
        func cancelled() -> CourierError { CourierError(.cancelled, "the loader was cancelled", url: url) }
        guard open else {
            deliver(.failure(cancelled()))
            return id
        }
        // Counted in the service's loads before it starts; a shutdown that ends it before it is recorded below
        // leaves the error in `endedWhileStarting`.
        guard loads.enter() else {
            _ = state.withLock { $0.starting.remove(id) }
            deliver(.failure(CourierError(.shutdown, "the service is shutting down: the request was not sent", url: url)))
            return id
        }
        // Made outside the lock: an immediate task may run to its end (and call `remove`) before it returns.
        let task = Task.immediate { [self] in
            // A task of its own answers its own cancellation, not that of a load it may be started from.
            let result = await CancellationScope.unscoped { await execution.result() }
            deliver(result)
            self.remove(id)
            loads.leave()
        }
        let endedMeanwhile = state.withLock { s -> CourierError? in
            s.starting.remove(id)
            let ended = s.endedWhileStarting.removeValue(forKey: id)
            if s.finishedEarly.remove(id) != nil { return nil }
            if var ended {
                if ended.url == nil { ended.url = url }
                return ended
            }
            if s.closed { return cancelled() }
            s.entries[id] = Entry(task: task, deliver: deliver, url: url)
            return nil
        }
        if let endedMeanwhile {
            deliver(.failure(endedMeanwhile))
            task.cancel()
        }
        return id
    }

    private func remove(_ id: Int) {
        state.withLock { s in
            if s.entries.removeValue(forKey: id) == nil, s.starting.contains(id) { s.finishedEarly.insert(id) }
        }
    }

    /// Cancels one request (on a task of its own: only those have handles).
    func cancel(_ id: Int) {
        let error = CourierError(.cancelled, "the request was cancelled")
        let entry = state.withLock { s -> Entry? in
            if let entry = s.entries.removeValue(forKey: id) { return entry }
            if s.starting.contains(id) { s.endedWhileStarting[id] = error }
            return nil
        }
        entry?.end(with: error)
    }

    /// Cancels every request in flight; with `close`, later requests are refused as cancelled too.
    func cancelAll(close: Bool) {
        end(with: CourierError(.cancelled, "the loader was cancelled"), close: close, starting: false)
    }

    /// Ends every request in flight with `error` (their callers get it at once, before their tasks are cancelled,
    /// so this error is the outcome), those still starting as soon as they are recorded: the service's shutdown
    /// ends its loads so.
    func cancelAll(with error: CourierError) {
        end(with: error, close: false, starting: true)
    }

    private func end(with error: CourierError, close: Bool, starting: Bool) {
        let (entries, scopes) = state.withLock { s -> ([Int: Entry], [CancellationScope]) in
            let all = s.entries
            s.entries = [:]
            if starting {
                for id in s.starting { s.endedWhileStarting[id] = error }
            }
            if close { s.closed = true }
            // The inline loads give their slots back themselves, when they return.
            return (all, s.inline.compactMap { $0 })
        }
        for entry in entries.values { entry.end(with: error) }
        for scope in scopes { scope.cancel(with: error) }
    }

    /// Requests in flight.
    var count: Int { state.withLock { $0.entries.count + $0.inline.count - $0.freeSlots.count } }
}
