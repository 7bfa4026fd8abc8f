import CourierCore
import Synchronization

/// A loader's requests in flight: each is a task plus the function that delivers its outcome to its caller (a
/// one-shot, a stream's channel). Cancelling a request cancels its task and delivers a `cancelled` error at once,
/// whatever the task is doing; the delivery functions keep only the first outcome. The tasks hold the
/// tracker, never the loader, so a loader can be freed while its requests run.
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
        var closed = false
    }

    private let state = Mutex(State())

    /// Starts `execution` on a new task that hands its outcome to `deliver`; returns the request's id. When
    /// the loader is closed the request is not started and `deliver` gets a `cancelled` error at once; when the
    /// service is shutting down, a `shutdown` error.
    func start(_ execution: RequestExecution, deliver: @escaping Deliver) -> Int {
        let url = execution.request.url
        let loads = execution.factory.service.loads
        enum Start { case started, loaderClosed, serviceShutDown }
        let (id, started) = state.withLock { s -> (Int, Start) in
            s.next += 1
            let id = s.next
            guard !s.closed else { return (id, .loaderClosed) }
            // Entered under the tracker's lock, so a shutdown's cancellation (which takes it) finds the entry.
            guard let ticket = loads.enter(cancel: { [self] error in self.cancel(id, with: error) }) else {
                return (id, .serviceShutDown)
            }
            let task = Task { [self] in
                let result = await execution.run()
                deliver(result)
                self.remove(id)
                loads.leave(ticket)
            }
            s.entries[id] = Entry(task: task, deliver: deliver, url: url)
            return (id, .started)
        }
        switch started {
        case .started: break
        case .loaderClosed: deliver(.failure(CourierError(.cancelled, "the loader was cancelled", url: url)))
        case .serviceShutDown:
            deliver(.failure(CourierError(.shutdown, "the service is shutting down: the request was not sent", url: url)))
        }
        return id
    }

    private func remove(_ id: Int) {
        _ = state.withLock { $0.entries.removeValue(forKey: id) }
    }

    /// Cancels one request.
    func cancel(_ id: Int) {
        cancel(id, with: CourierError(.cancelled, "the request was cancelled"))
    }

    /// Ends one request with `error` (its caller gets it at once) and cancels its task.
    func cancel(_ id: Int, with error: CourierError) {
        guard let entry = state.withLock({ $0.entries.removeValue(forKey: id) }) else { return }
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
