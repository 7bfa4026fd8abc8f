internal import Synchronization

/// Performs a `ShutdownStateMachine` for an owner that runs requests: refuses new ones once shutdown starts,
/// waits for the ones in flight until the grace period ends, closes once, and lets any number of concurrent
/// `shutdown` callers return together when the close is done.
///
/// The owner counts its own requests (its hot path stays its own) and reports:
/// - ``isAcceptingRequests`` is checked by every new request *after* it counted itself in flight, and
///   ``drained()`` is called whenever the count falls to zero while not accepting, so that a request is either
///   refused or waited for, never missed;
/// - `close(cancelInFlight:)`, given to ``shutdown(gracePeriod:isIdle:close:)``, ends what is still running
///   (when `cancelInFlight`) and releases every resource.
package final class GracefulShutdown: Sendable {
    private struct State: ~Copyable {
        var machine = ShutdownStateMachine()
        /// The caller driving the shutdown, waiting to learn how to close.
        var driver: CheckedContinuation<Bool, Never>?
        /// How to close, when it was decided before the driver started waiting.
        var decided: Bool?
        /// Other `shutdown` callers, waiting for the close to finish.
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())
    /// A copy of the machine's `acceptsRequests`, readable without the lock by every request.
    private let accepting = Atomic<Bool>(true)

    package init() {}

    /// Whether new requests are accepted (false from the first `shutdown` call on).
    package var isAcceptingRequests: Bool { accepting.load(ordering: .sequentiallyConsistent) }

    /// Whether the shutdown has finished.
    package var isClosed: Bool { state.withLock { $0.machine.isClosed } }

    /// Runs the shutdown, or waits for the one in progress, and returns when the owner is closed.
    ///
    /// - Parameters:
    ///   - gracePeriod: how long requests in flight may take before `close` is told to cancel them; `.zero` or
    ///     less cancels at once. Cancelling the calling task ends the grace period at once.
    ///   - isIdle: whether nothing is in flight, asked once after new requests stop being accepted.
    ///   - close: ends the requests still in flight when its argument is true, then releases every resource;
    ///     called once, by the first caller.
    package func shutdown(
        gracePeriod: Duration, isIdle: () -> Bool, close: (_ cancelInFlight: Bool) async -> Void
    ) async {
        let action = state.withLock { s -> ShutdownStateMachine.ShutdownAction in
            let action = s.machine.shutdownRequested()
            accepting.store(s.machine.acceptsRequests, ordering: .sequentiallyConsistent)
            return action
        }
        switch action {
        case .returnNow:
            return
        case .waitUntilClosed:
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let closed = state.withLock { s -> Bool in
                    if s.machine.isClosed { return true }
                    s.waiters.append(continuation)
                    return false
                }
                if closed { continuation.resume() }
            }
        case .startDraining:
            if isIdle() { drained() }
            if gracePeriod <= .zero { gracePeriodEnded() }
            let timer = Task { [self] in
                // A cancelled sleep (the drain finished first) must not end the grace period.
                guard (try? await Task.sleep(for: gracePeriod)) != nil else { return }
                gracePeriodEnded()
            }
            let cancelInFlight = await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                    let decided = state.withLock { s -> Bool? in
                        if let decided = s.decided { return decided }
                        s.driver = continuation
                        return nil
                    }
                    if let decided { continuation.resume(returning: decided) }
                }
            } onCancel: {
                gracePeriodEnded()
            }
            timer.cancel()
            await close(cancelInFlight)
            let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
                guard s.machine.closeFinished() else { return [] }
                defer { s.waiters.removeAll() }
                return s.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    /// Nothing is in flight any more. Called by the owner whenever its count falls to zero while
    /// ``isAcceptingRequests`` is false; extra calls are harmless.
    package func drained() {
        decide { $0.drained() }
    }

    private func gracePeriodEnded() {
        decide { $0.gracePeriodEnded() }
    }

    private func decide(_ event: (inout ShutdownStateMachine) -> ShutdownStateMachine.DrainAction) {
        let driver = state.withLock { s -> (CheckedContinuation<Bool, Never>, Bool)? in
            switch event(&s.machine) {
            case .none:
                return nil
            case .close(let cancelInFlight):
                guard let driver = s.driver else {
                    s.decided = cancelInFlight
                    return nil
                }
                s.driver = nil
                return (driver, cancelInFlight)
            }
        }
        if let (continuation, cancelInFlight) = driver { continuation.resume(returning: cancelInFlight) }
    }
}
