internal import CourierCore
internal import Synchronization

/// Owns a ``TokenStateMachine`` under a lock and performs its actions: starts the one refresh in flight (in its
/// own task, so a cancelled caller does not cancel it for the others) and resumes the waiters with the result.
final class TokenCache: Sendable {
    private typealias Waiter = CheckedContinuation<AccessToken, any Error>

    private struct Locked {
        var machine: TokenStateMachine<Waiter>
        var nextID: UInt64 = 0
    }

    private let state: Mutex<Locked>
    private let clock: @Sendable () -> Double
    private let fetch: @Sendable (_ avoiding: String?) async throws -> AccessToken

    /// - Parameters:
    ///   - refreshMargin: seconds ahead of expiry at which a token is replaced.
    ///   - fetch: gets a new token (from the token endpoint, or a fleet's shared store), never the token value
    ///     `avoiding` (the one last refused or replaced); called by at most one task at a time.
    init(
        refreshMargin: Double, clock: @escaping @Sendable () -> Double,
        fetch: @escaping @Sendable (_ avoiding: String?) async throws -> AccessToken
    ) {
        self.state = Mutex(Locked(machine: TokenStateMachine(refreshMargin: refreshMargin)))
        self.clock = clock
        self.fetch = fetch
    }

    /// A valid token, refreshing first when there is none or it is about to expire. A caller whose task is
    /// cancelled while it waits resumes at once with `CancellationError`.
    func token() async throws -> AccessToken {
        let now = clock()
        return try await wait { machine, id, waiter in machine.authorise(now: now, id: id, waiter: waiter) }
    }

    /// A fresh token, joining a refresh in flight or starting one.
    @discardableResult
    func refresh() async throws -> AccessToken {
        try await wait { machine, id, waiter in machine.refresh(id: id, waiter: waiter) }
    }

    /// Parks the caller through `event` and runs the action. Cancellation: `Task.isCancelled` is checked under
    /// the same lock the cancellation handler takes, so the waiter is either never parked or found by the
    /// handler.
    private func wait(
        _ event: @escaping @Sendable (inout TokenStateMachine<Waiter>, UInt64, Waiter) -> TokenStateMachine<Waiter>.AuthoriseAction
    ) async throws -> AccessToken {
        let id = state.withLock { locked in
            locked.nextID += 1
            return locked.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: Waiter) in
                let action: TokenStateMachine<Waiter>.AuthoriseAction? = state.withLock { locked in
                    if Task.isCancelled { return nil }
                    return event(&locked.machine, id, waiter)
                }
                guard let action else {
                    waiter.resume(throwing: CancellationError())
                    return
                }
                run(action, waiter: waiter)
            }
        } onCancel: {
            state.withLock { $0.machine.cancel(id: id) }?.resume(throwing: CancellationError())
        }
    }

    /// Drops `tokenValue` if it is the current token.
    func authorisationFailed(tokenValue: String) {
        state.withLock { $0.machine.authorisationFailed(tokenValue: tokenValue) }
    }

    /// The token held now, without refreshing.
    var currentToken: AccessToken? { state.withLock { $0.machine.currentToken } }

    private func run(_ action: TokenStateMachine<Waiter>.AuthoriseAction, waiter: Waiter) {
        switch action {
        case .use(let token):
            waiter.resume(returning: token)
        case .wait(startRefresh: false, _):
            break
        case .wait(startRefresh: true, let avoiding):
            // Shared by every waiter: outside the scope of the load that happened to start it.
            Task { await CancellationScope.unscoped { await self.performRefresh(avoiding: avoiding) } }
        }
    }

    private func performRefresh(avoiding: String?) async {
        do {
            let token = try await fetch(avoiding)
            let waiters = state.withLock { $0.machine.refreshSucceeded(token) }
            for waiter in waiters { waiter.resume(returning: token) }
        } catch {
            let waiters = state.withLock { $0.machine.refreshFailed() }
            for waiter in waiters { waiter.resume(throwing: error) }
        }
    }
}
