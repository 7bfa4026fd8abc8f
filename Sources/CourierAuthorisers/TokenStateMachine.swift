/// The life of a cached access token, as a pure state machine: no I/O, no clock reads, no locks. The owner
/// (``TokenCache``) holds it under a lock, feeds it events and runs the actions it returns.
///
/// Single flight: while a refresh is in flight every caller is parked as a waiter of that one refresh; the
/// refresh's result (token or error) is handed to all of them at once.
///
/// A token the server refused (401), or one an explicit refresh replaces, is remembered until a refresh succeeds:
/// the refresh it starts carries it (`avoiding`), so that a refresh through a fleet's shared store does not take
/// back the very token just refused from a record another instance has not replaced yet.
///
///     empty ──authorise──▶ refreshing(waiters) ──succeeded──▶ valid(token) ──expired / failed(token)──▶ empty
///                                   └──────────failed─────────▶ empty
struct TokenStateMachine<Waiter> {
    private enum State {
        case empty
        case valid(AccessToken)
        case refreshing(waiters: [(id: UInt64, waiter: Waiter)])
    }

    /// What the owner does after ``authorise(now:waiter:)`` or ``refresh(waiter:)``.
    enum AuthoriseAction {
        /// Use this token now; the waiter was not kept.
        case use(AccessToken)
        /// The waiter is parked; when `startRefresh` is true the owner starts the (one) refresh, which must not
        /// return the token value `avoiding` (refused by the server, or replaced on request).
        case wait(startRefresh: Bool, avoiding: String? = nil)
    }

    private var state: State = .empty
    /// The last token value refused (401) or explicitly replaced, until a refresh succeeds.
    private var rejected: String?
    /// Seconds ahead of expiry at which a token counts as expired.
    let refreshMargin: Double

    init(refreshMargin: Double) {
        self.refreshMargin = refreshMargin
    }

    /// A request wants a token at `now`; `id` identifies its waiter for ``cancel(id:)``.
    mutating func authorise(now: Double, id: UInt64, waiter: Waiter) -> AuthoriseAction {
        switch state {
        case .valid(let token) where !token.needsRefresh(at: now, margin: refreshMargin):
            return .use(token)
        case .empty, .valid:
            state = .refreshing(waiters: [(id, waiter)])
            return .wait(startRefresh: true, avoiding: rejected)
        case .refreshing(var waiters):
            waiters.append((id, waiter))
            state = .refreshing(waiters: waiters)
            return .wait(startRefresh: false)
        }
    }

    /// Someone asks for fresh credentials now: joins a refresh in flight or starts one.
    mutating func refresh(id: UInt64, waiter: Waiter) -> AuthoriseAction {
        switch state {
        case .empty, .valid:
            if case .valid(let token) = state { rejected = token.value }
            state = .refreshing(waiters: [(id, waiter)])
            return .wait(startRefresh: true, avoiding: rejected)
        case .refreshing(var waiters):
            waiters.append((id, waiter))
            state = .refreshing(waiters: waiters)
            return .wait(startRefresh: false)
        }
    }

    /// The refresh returned `token`: every waiter gets it.
    mutating func refreshSucceeded(_ token: AccessToken) -> [Waiter] {
        guard case .refreshing(let waiters) = state else { preconditionFailure("Invalid state: \(state)") }
        state = .valid(token)
        rejected = nil
        return waiters.map(\.waiter)
    }

    /// The refresh failed: every waiter gets the error, and the next request tries again (still avoiding a
    /// refused token).
    mutating func refreshFailed() -> [Waiter] {
        guard case .refreshing(let waiters) = state else { preconditionFailure("Invalid state: \(state)") }
        state = .empty
        return waiters.map(\.waiter)
    }

    /// The task of waiter `id` was cancelled: it is removed (and returned, for the owner to resume with a
    /// cancellation error) if it is still parked. The refresh goes on for the others.
    mutating func cancel(id: UInt64) -> Waiter? {
        guard case .refreshing(var waiters) = state, let index = waiters.firstIndex(where: { $0.id == id }) else { return nil }
        let removed = waiters.remove(at: index)
        state = .refreshing(waiters: waiters)
        return removed.waiter
    }

    /// The server refused a request carrying `tokenValue` (401). The token is dropped if it is still the
    /// current one, and the next refresh avoids it; a newer token, or a refresh in flight, is left alone.
    mutating func authorisationFailed(tokenValue: String) {
        if case .valid(let token) = state, token.value == tokenValue {
            state = .empty
            rejected = tokenValue
        }
    }

    /// The current token, if one is held (for tests and diagnostics).
    var currentToken: AccessToken? {
        if case .valid(let token) = state { return token }
        return nil
    }

    var isRefreshing: Bool {
        if case .refreshing = state { return true }
        return false
    }
}
