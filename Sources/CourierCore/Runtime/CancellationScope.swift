internal import Synchronization

/// A cancellation that belongs to one piece of work running on its caller's task, apart from that task's own.
///
/// A data loader runs a load on the task that awaits it, not on a task of its own (a task per load costs a trip
/// through the global executor and a fresh task allocator each time). Cancelling the *task* cancels the load, as
/// usual; but the loader must also be able to end one load (`DataLoader.cancelAll()`, the loader freed, a
/// service's shutdown) without cancelling the caller's task. The load binds a scope as ``current`` while it runs,
/// and every wait on its path asks for both cancellations at once: through ``withCancellationHandler(operation:onCancel:)``
/// instead of `withTaskCancellationHandler`, and ``isCancelled`` instead of `Task.isCancelled`. Where no scope is
/// bound the two are exactly the standard ones.
///
/// A scope is a task-local value, so unstructured tasks (`Task { }`) inherit it. A task that outlives the work or
/// serves others (a shared connect, a shared token refresh, a background revalidation) starts with
/// ``unscoped(isolation:_:)`` so that one load's cancellation does not end it.
package final class CancellationScope: Sendable {
    /// The scope of the work running on this task; nil outside any.
    @TaskLocal package static var current: CancellationScope?

    private struct State: ~Copyable {
        var reason: CourierError?
        /// The registered handlers. A load waits for one thing at a time, so the first has a slot of its own and
        /// the array (allocated only when a second one is registered) holds the rest.
        var first: (token: Int, handler: @Sendable () -> Void)?
        var more: [(token: Int, handler: @Sendable () -> Void)] = []
        var nextToken = 0
    }

    private let state = Mutex(State())
    /// Set (under the lock, once the reason is) when the scope is cancelled: the question every load and every
    /// wait asks, answered with one atomic load instead of the lock.
    private let cancelled = Atomic<Bool>(false)

    /// Makes a scope that is not cancelled.
    package init() {}

    /// Whether ``cancel(with:)`` was called.
    package var isCancelledNow: Bool { cancelled.load(ordering: .acquiring) }

    /// The error the scope was first cancelled with; nil while it is not.
    package var reason: CourierError? {
        guard isCancelledNow else { return nil }
        return state.withLock { $0.reason }
    }

    /// Cancels the scope (the first call's `reason` is kept; later calls do nothing): every wait under it that is
    /// registered now is woken through its handler, and every later one is refused at once.
    package func cancel(with reason: CourierError) {
        let handlers = state.withLock { s -> [@Sendable () -> Void] in
            guard s.reason == nil else { return [] }
            s.reason = reason
            cancelled.store(true, ordering: .releasing)
            defer {
                s.first = nil
                s.more = []
            }
            return (s.first.map { [$0.handler] } ?? []) + s.more.map(\.handler)
        }
        for handler in handlers { handler() }
    }

    /// Registers `handler`; returns its token, or nil after running it at once when the scope is cancelled.
    private func register(_ handler: @escaping @Sendable () -> Void) -> Int? {
        let token = state.withLock { s -> Int? in
            guard s.reason == nil else { return nil }
            s.nextToken += 1
            if s.first == nil { s.first = (s.nextToken, handler) } else { s.more.append((s.nextToken, handler)) }
            return s.nextToken
        }
        if token == nil { handler() }
        return token
    }

    private func unregister(_ token: Int) {
        state.withLock { s in
            if s.first?.token == token {
                s.first = nil
            } else if let index = s.more.lastIndex(where: { $0.token == token }) {
                s.more.remove(at: index)
            }
        }
    }

    // MARK: - For the waits

    /// Whether the current task is cancelled or the current scope (if any) is.
    package static var isCancelled: Bool {
        if Task.isCancelled { return true }
        guard let scope = current else { return false }
        return scope.isCancelledNow
    }

    /// `withTaskCancellationHandler` that also answers the current scope: `handler` runs when the task is
    /// cancelled or when the scope is (at most once for each; possibly concurrently with `operation`, and at once
    /// when either is cancelled already). As with the standard one, `operation` must check ``isCancelled`` where
    /// it parks, under the lock its handler takes.
    ///
    /// It runs on its caller's executor (`nonisolated(nonsending)`), as the waits that call it do: no hop to the
    /// generic executor and back around every wait.
    nonisolated(nonsending) package static func withCancellationHandler<T>(
        operation: nonisolated(nonsending) () async throws -> T, onCancel handler: @escaping @Sendable () -> Void
    ) async rethrows -> T {
        guard let scope = current else {
            return try await withTaskCancellationHandler(operation: operation, onCancel: handler)
        }
        let token = scope.register(handler)
        defer { if let token { scope.unregister(token) } }
        return try await withTaskCancellationHandler(operation: operation, onCancel: handler)
    }

    /// Sleeps until `deadline`; throws `CancellationError` when the task or the current scope is cancelled first.
    package static func sleep(until deadline: ContinuousClock.Instant) async throws {
        guard current != nil else {
            try await Task.sleep(until: deadline, clock: ContinuousClock())
            return
        }
        try await sleepInScope(until: deadline)
    }

    /// The scope's sleep: `Task.sleep` answers only its own task's cancellation, so it runs on a task of its own
    /// that the scope's handler cancels. Only a load that waits (a rate limit, a back-off) pays for that task.
    private static func sleepInScope(until deadline: ContinuousClock.Instant) async throws {
        let sleeper = Task { try await Task.sleep(until: deadline, clock: ContinuousClock()) }
        try await withCancellationHandler {
            try await sleeper.value
        } onCancel: {
            sleeper.cancel()
        }
        // The sleeper can finish on its own just as the scope is cancelled: the caller still learns of it.
        if isCancelled { throw CancellationError() }
    }

    /// Runs `body` outside any scope: for a task that serves more than the load that starts it (a shared connect
    /// or refresh) or outlives it (a background revalidation).
    package static func unscoped<T>(
        isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T
    ) async rethrows -> T {
        guard current != nil else { return try await body() }
        return try await $current.withValue(nil, operation: body, isolation: isolation)
    }
}
