internal import CourierCore
internal import Synchronization

/// A loader's requests in flight, of two kinds:
/// - A load awaited with ``DataLoader/load(_:)`` runs on its caller's task (``run(_:)``) under a
///   `CancellationScope` of its own. Cancelling it cancels the scope: every wait on its path answers the scope
///   as it answers task cancellation, so the caller resumes at once with the error, and the caller's task itself
///   is not cancelled.
/// - The others (streams, delegates, completions) run on a task of their own (``start(_:deliver:)``) plus the
///   function that delivers the outcome to whoever waits (a one-shot, a stream's channel). Cancelling one
///   cancels its task and delivers the error at once, whatever the task is doing; the delivery functions keep
///   only the first outcome. The tasks hold the tracker, never the loader, so a loader can be freed while they run.
final class LoadTracker: Sendable {
    typealias Deliver = @Sendable (Result<Response, CourierError>) -> Void

    private struct Entry {
        enum Owner {
            /// Runs on a task of its own; `deliver` hands its outcome over.
            case task(Task<Void, Never>, deliver: Deliver)
            /// Runs on its caller's task, under this scope.
            case inline(CancellationScope)
        }

        var owner: Owner
        var url: String

        /// Ends the request with `error`: its waiter learns it at once.
        func end(with error: CourierError) {
            var error = error
            if error.url == nil { error.url = url }
            switch owner {
            case .task(let task, let deliver):
                deliver(.failure(error))
                task.cancel()
            case .inline(let scope):
                scope.cancel(with: error)
            }
        }
    }

    private struct State {
        var next = 0
        var entries: [Int: Entry] = [:]
        /// Requests started but not yet recorded, and those of them whose task already finished (an immediate
        /// task that never suspended).
        var starting: Set<Int> = []
        var finishedEarly: Set<Int> = []
        /// Requests a service's shutdown ended while they were still starting, and with which error.
        var endedWhileStarting: [Int: CourierError] = [:]
        var closed = false
    }

    private let state = Mutex(State())

    /// Runs `execution` on the caller's task and returns its outcome. Cancelling the request (``cancel(_:)``,
    /// ``cancelAll(close:)``, the service's shutdown) or the caller's task ends it at once: the outcome is then
    /// the cancellation's error. When the loader is closed the request is not started and fails as `cancelled`;
    /// when the service is shutting down, as `shutdown`; when the caller's task is cancelled already, as
    /// `cancelled`, with nothing sent.
    nonisolated(nonsending) func run(_ execution: RequestExecution) async -> Result<Response, CourierError> {
        let url = execution.request.url
        let loads = execution.factory.service.loads
        let scope = CancellationScope()
        let (id, open) = state.withLock { s -> (Int, Bool) in
            s.next += 1
            if !s.closed { s.entries[s.next] = Entry(owner: .inline(scope), url: url) }
            return (s.next, !s.closed)
        }
        guard open else { return .failure(CourierError(.cancelled, "the loader was cancelled", url: url)) }
        // Recorded before it enters the service's loads, so a shutdown's cancel always finds it.
        guard let ticket = loads.enter(id, of: self) else {
            _ = state.withLock { $0.entries.removeValue(forKey: id) }
            return .failure(CourierError(.shutdown, "the service is shutting down: the request was not sent", url: url))
        }
        var result: Result<Response, CourierError>
        if Task.isCancelled {
            result = .failure(CourierError(.cancelled, "the request was cancelled", url: url))
        } else {
            result = await CancellationScope.$current.withValue(scope) { await execution.run() }
        }
        _ = state.withLock { $0.entries.removeValue(forKey: id) }
        // A cancellation that came before the request left the tracker wins, as the first outcome delivered
        // does for a request on a task of its own.
        if var reason = scope.reason {
            if reason.url == nil { reason.url = url }
            result = .failure(reason)
        }
        loads.leave(ticket)
        return result
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
        guard let ticket = loads.enter(id, of: self) else {
            _ = state.withLock { $0.starting.remove(id) }
            deliver(.failure(CourierError(.shutdown, "the service is shutting down: the request was not sent", url: url)))
            return id
        }
        // Made outside the lock: an immediate task may run to its end (and call `remove`) before it returns.
        let task = Task.immediate { [self] in
            // A task of its own answers its own cancellation, not that of a load it may be started from.
            let result = await CancellationScope.unscoped { await execution.run() }
            deliver(result)
            self.remove(id)
            loads.leave(ticket)
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
            s.entries[id] = Entry(owner: .task(task, deliver: deliver), url: url)
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

    /// Cancels one request.
    func cancel(_ id: Int) {
        cancel(id, with: CourierError(.cancelled, "the request was cancelled"))
    }

    /// Ends one request with `error` (its caller gets it at once, before its task is cancelled, so this error is
    /// the outcome); one still starting ends as soon as it is recorded.
    func cancel(_ id: Int, with error: CourierError) {
        let entry = state.withLock { s -> Entry? in
            if let entry = s.entries.removeValue(forKey: id) { return entry }
            if s.starting.contains(id) { s.endedWhileStarting[id] = error }
            return nil
        }
        entry?.end(with: error)
    }

    /// Cancels every request in flight; with `close`, later requests are refused as cancelled too.
    func cancelAll(close: Bool) {
        let entries = state.withLock { s in
            let all = s.entries
            s.entries = [:]
            if close { s.closed = true }
            return all
        }
        for entry in entries.values {
            entry.end(with: CourierError(.cancelled, "the loader was cancelled"))
        }
    }

    /// Requests in flight.
    var count: Int { state.withLock { $0.entries.count } }
}
