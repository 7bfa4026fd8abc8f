import CourierCore
import Synchronization

/// A loader's requests in flight: each is a task plus the one-shot its caller waits on. Cancelling a request
/// cancels its task and resumes its caller at once with a `cancelled` error, whatever the task is doing. The
/// tasks hold the tracker, never the loader, so a loader can be freed while its requests run.
final class LoadTracker: Sendable {
    private struct Entry {
        var task: Task<Void, Never>
        var shot: OneShot<Result<Response, CourierError>>
        var url: String
    }

    private struct State {
        var next = 0
        var entries: [Int: Entry] = [:]
        var closed = false
    }

    private let state = Mutex(State())

    /// Starts `execution` on a new task; returns its id and the one-shot that delivers its result.
    func start(_ execution: RequestExecution) -> (Int, OneShot<Result<Response, CourierError>>) {
        let shot = OneShot<Result<Response, CourierError>>()
        let url = execution.request.url
        let id: Int? = state.withLock { s in
            guard !s.closed else { return nil }
            s.next += 1
            let id = s.next
            let task = Task { [self] in
                let result = await execution.run()
                shot.resume(result)
                self.remove(id)
            }
            s.entries[id] = Entry(task: task, shot: shot, url: url)
            return id
        }
        guard let id else {
            shot.resume(.failure(CourierError(.cancelled, "the loader was cancelled", url: url)))
            return (0, shot)
        }
        return (id, shot)
    }

    private func remove(_ id: Int) {
        _ = state.withLock { $0.entries.removeValue(forKey: id) }
    }

    /// Cancels one request.
    func cancel(_ id: Int) {
        guard let entry = state.withLock({ $0.entries.removeValue(forKey: id) }) else { return }
        entry.task.cancel()
        entry.shot.resume(.failure(CourierError(.cancelled, "the request was cancelled", url: entry.url)))
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
            entry.shot.resume(.failure(CourierError(.cancelled, "the loader was cancelled", url: entry.url)))
        }
    }

    /// Requests in flight.
    var count: Int { state.withLock { $0.entries.count } }
}
