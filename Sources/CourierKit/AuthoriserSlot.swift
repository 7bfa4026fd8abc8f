internal import CourierCore
internal import Synchronization

/// One user's authoriser for one policy instance, with the loader's single-flight refresh: the requests that
/// get a 401 at the same time share one `refresh()`, and a request whose credentials were already replaced by
/// a refresh since it was authorised just tries again instead of refreshing once more.
///
/// Every call into the plugin goes through it, bounded by the instance's timeout and the load's deadline: the load
/// stops waiting for a plugin that never answers (and on cancellation), while the plugin's work runs on outside
/// the load's scope, since it may serve other loads (a shared token refresh).
final class AuthoriserSlot: Sendable {
    let authoriser: any Authoriser
    let name: String
    /// How long one call into the plugin may take.
    let timeout: Duration
    /// The service's clock, which times the calls.
    let clock: LoaderClock

    private struct State {
        /// Successful refreshes so far.
        var epoch = 0
        var inFlight: Task<Result<Void, CourierError>, Never>?
    }

    private let state = Mutex(State())

    init(authoriser: any Authoriser, instance: AuthoriserInstance, clock: LoaderClock) {
        self.authoriser = authoriser
        self.name = instance.name
        self.timeout = instance.timeout
        self.clock = clock
    }

    /// Successful refreshes so far; a request notes it before it is authorised.
    var epoch: Int { state.withLock { $0.epoch } }

    /// Starts a refresh unless one finished after `seen` (nil then) or one is running (joined); the caller
    /// awaits the returned task.
    private func beginRefresh(after seen: Int, url: String) -> (LoaderEvent.RefreshRole, Task<Result<Void, CourierError>, Never>?) {
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

    /// Authorises `request`, within the plugin's timeout and `deadline`.
    func authorise(_ request: AuthorisationRequest, deadline: Deadline) async throws(CourierError) -> AuthorisationRequest {
        let (authoriser, name, url) = (self.authoriser, self.name, request.url.description)
        return try await race(deadline: deadline, url: url, what: "authoriser '\(name)' did not authorise the request") {
            () async throws(CourierError) -> AuthorisationRequest in
            var copy = request
            do {
                try await authoriser.authorise(&copy)
            } catch {
                throw CourierError(.authorisation, "authoriser '\(name)' failed to authorise the request", url: url, cause: error)
            }
            return copy
        }
    }

    /// After a 401 to `refused` (authorised when the epoch was `seen`): tells the plugin its credentials were
    /// refused, then refreshes them once (or joins the refresh under way, or none when one finished since), each
    /// step within the plugin's timeout and `deadline`. Returns the part this load played, once it is over;
    /// `announce` runs before the wait (a stream's consumer is told a retry follows).
    nonisolated(nonsending) func refresh(
        after refused: AuthorisationRequest, seen: Int, deadline: Deadline,
        announce: (LoaderEvent.RefreshRole) async throws(CourierError) -> Void
    ) async throws(CourierError) -> LoaderEvent.RefreshRole {
        let (authoriser, name, url) = (self.authoriser, self.name, refused.url.description)
        _ = try await race(deadline: deadline, url: url, what: "authoriser '\(name)' did not take the refused credentials back") {
            () async throws(CourierError) -> Bool in
            await authoriser.authorisationFailed(for: refused)
            return true
        }
        let (role, refresh) = beginRefresh(after: seen, url: url)
        try await announce(role)
        guard let refresh else { return role }
        _ = try await race(deadline: deadline, url: url, what: "authoriser '\(name)' did not refresh") {
            () async throws(CourierError) -> Bool in
            try await refresh.value.get()
            return true
        }
        return role
    }

    /// Runs `operation` outside the load's scope; the caller resumes with its result, at the plugin's timeout (or
    /// the deadline, if sooner), or on cancellation, whichever comes first.
    private func race<T: Sendable>(
        deadline: Deadline, url: String, what: String,
        _ operation: @escaping @Sendable () async throws(CourierError) -> T
    ) async throws(CourierError) -> T {
        let clock = self.clock
        let timeout = min(self.timeout, deadline - clock.now())
        return try await DeadlineRace.run(
            timeout: timeout, timedOut: CourierError(.timeout, "\(what) within \(DurationFormat.format(timeout))", url: url), url: url,
            clock: clock, operation
        )
    }

    private func finish(succeeded: Bool) {
        state.withLock { s in
            if succeeded { s.epoch += 1 }
            s.inFlight = nil
        }
    }
}
