import CourierCore
import Synchronization

/// Owns a ``TokenStateMachine`` under a lock and performs its actions: starts the one refresh in flight (in its
/// own task, so a cancelled caller does not cancel it for the others) and resumes the waiters with the result.
final class TokenCache: Sendable {
    private typealias Waiter = CheckedContinuation<AccessToken, any Error>

    private let machine: Mutex<TokenStateMachine<Waiter>>
    private let clock: @Sendable () -> Double
    private let fetch: @Sendable () async throws -> AccessToken

    /// - Parameters:
    ///   - refreshMargin: seconds ahead of expiry at which a token is replaced.
    ///   - fetch: asks the token endpoint for a new token; called by at most one task at a time.
    init(refreshMargin: Double, clock: @escaping @Sendable () -> Double, fetch: @escaping @Sendable () async throws -> AccessToken) {
        self.machine = Mutex(TokenStateMachine(refreshMargin: refreshMargin))
        self.clock = clock
        self.fetch = fetch
    }

    /// A valid token, refreshing first when there is none or it is about to expire.
    func token() async throws -> AccessToken {
        let now = clock()
        return try await withCheckedThrowingContinuation { (waiter: Waiter) in
            let action = machine.withLock { $0.authorise(now: now, waiter: waiter) }
            run(action, waiter: waiter)
        }
    }

    /// A fresh token, joining a refresh in flight or starting one.
    @discardableResult
    func refresh() async throws -> AccessToken {
        try await withCheckedThrowingContinuation { (waiter: Waiter) in
            let action = machine.withLock { $0.refresh(waiter: waiter) }
            run(action, waiter: waiter)
        }
    }

    /// Drops `tokenValue` if it is the current token.
    func authorisationFailed(tokenValue: String) {
        machine.withLock { $0.authorisationFailed(tokenValue: tokenValue) }
    }

    /// The token held now, without refreshing.
    var currentToken: AccessToken? { machine.withLock { $0.currentToken } }

    private func run(_ action: TokenStateMachine<Waiter>.AuthoriseAction, waiter: Waiter) {
        switch action {
        case .use(let token):
            waiter.resume(returning: token)
        case .wait(startRefresh: false):
            break
        case .wait(startRefresh: true):
            Task { await self.performRefresh() }
        }
    }

    private func performRefresh() async {
        do {
            let token = try await fetch()
            let waiters = machine.withLock { $0.refreshSucceeded(token) }
            for waiter in waiters { waiter.resume(returning: token) }
        } catch {
            let waiters = machine.withLock { $0.refreshFailed() }
            for waiter in waiters { waiter.resume(throwing: error) }
        }
    }
}
