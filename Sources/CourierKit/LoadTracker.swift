import CourierCore
import Synchronization

/// A loader's requests in flight: each is a task plus the function that delivers its outcome to its caller (a
/// one-shot, a stream's channel). Cancelling a request cancels its task and delivers a `cancelled` error at once,
/// whatever the task is doing; the delivery functions keep only the first outcome. The tasks hold the
/// tracker, never the loader, so a loader can be freed while its requests run.
///
/// A request's task starts immediately (`Task.immediate`): it runs on the caller's thread until it first
/// suspends, so a load that never does (a fresh cache hit, an offline failure) is answered with no hop between
/// threads; one that waits for the network resumes on the global executor as any task.
final class LoadTracker: Sendable {
    typealias Deliver = @Sendable (Result<Response, CourierError>) -> Void

    private struct Entry {
        var task: Task<Void, Never>
        var deliver: Deliver
        var url: String
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
        guard let ticket = loads.enter(cancel: { [self] error in self.cancel(id, with: error) }) else {
            _ = state.withLock { $0.starting.remove(id) }
            deliver(.failure(CourierError(.shutdown, "the service is shutting down: the request was not sent", url: url)))
            return id
        }
        // Made outside the lock: an immediate task may run to its end (and call `remove`) before it returns.
        let task = Task.immediate { [self] in
            let result = await execution.run()
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
        guard let entry else { return }
        var error = error
        if error.url == nil { error.url = entry.url }
        entry.deliver(.failure(error))
        entry.task.cancel()
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
            entry.task.cancel()
            entry.deliver(.failure(CourierError(.cancelled, "the loader was cancelled", url: entry.url)))
        }
    }

    /// Requests in flight.
    var count: Int { state.withLock { $0.entries.count } }
}
