import CourierCore
import Synchronization

/// One user's authoriser for one policy instance, with the loader's single-flight refresh: the requests that
/// get a 401 at the same time share one `refresh()`, and a request whose credentials were already replaced by
/// a refresh since it was authorised just tries again instead of refreshing once more.
final class AuthoriserSlot: Sendable {
    let authoriser: any Authoriser
    let name: String

    private struct State {
        /// Successful refreshes so far.
        var epoch = 0
        var inFlight: Task<Result<Void, CourierError>, Never>?
    }

    private let state = Mutex(State())

    init(authoriser: any Authoriser, name: String) {
        self.authoriser = authoriser
        self.name = name
    }

    /// Successful refreshes so far; a request notes it before it is authorised.
    var epoch: Int { state.withLock { $0.epoch } }

    /// Starts a refresh unless one finished after `seen` (nil then) or one is running (joined); the caller
    /// awaits the returned task.
    func beginRefresh(after seen: Int, url: String) -> (LoaderEvent.RefreshRole, Task<Result<Void, CourierError>, Never>?) {
        state.withLock { s in
            if s.epoch > seen { return (.alreadyRefreshed, nil) }
            if let running = s.inFlight { return (.joined, running) }
            let authoriser = self.authoriser
            let name = self.name
            // Shared by every load that joins it: outside the scope of the load that started it.
            let task = Task { [self] () -> Result<Void, CourierError> in
                let result: Result<Void, CourierError>
                do {
                    try await CancellationScope.unscoped { try await authoriser.refresh() }
                    result = .success(())
                } catch {
                    result = .failure(
                        CourierError(.authorisation, "authoriser '\(name)' failed to refresh after a 401", url: url, cause: error)
                    )
                }
                self.finish(succeeded: (try? result.get()) != nil)
                return result
            }
            s.inFlight = task
            return (.started, task)
        }
    }

    private func finish(succeeded: Bool) {
        state.withLock { s in
            if succeeded { s.epoch += 1 }
            s.inFlight = nil
        }
    }
}
