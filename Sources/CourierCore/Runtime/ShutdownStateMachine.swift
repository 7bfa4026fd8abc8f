/// The order of a graceful shutdown, for an owner that runs requests (the HTTP client, the data-loader service).
///
/// Pure: events in, actions out; the owner counts its requests, runs the grace timer, closes its resources and
/// resumes the callers. The states, in the only order they are visited:
///
/// - **running**: requests are accepted;
/// - **draining**: the first `shutdown` call arrived; new requests are refused, the ones in flight may finish
///   until the grace period ends;
/// - **closing**: the owner was told to close (cancelling what is still in flight when the grace period ended
///   first); later `shutdown` calls wait;
/// - **closed**: everything is released; `shutdown` returns at once.
package struct ShutdownStateMachine: Sendable {
    private enum State: Sendable {
        case running
        case draining
        case closing
        case closed
    }

    private var state = State.running

    package init() {}

    /// What a `shutdown` call does.
    package enum ShutdownAction: Equatable, Sendable {
        /// The first call: stop accepting requests, check whether any are in flight, start the grace timer, and
        /// wait for ``drained()`` or ``gracePeriodEnded()`` to say how to close.
        case startDraining
        /// Another call is closing: wait until it has finished.
        case waitUntilClosed
        /// Already closed: return.
        case returnNow
    }

    /// What the owner does after a drain event.
    package enum DrainAction: Equatable, Sendable {
        /// Nothing (not draining any more, or not yet).
        case none
        /// Close now; with `cancelInFlight`, requests still in flight are ended first (the grace period ended).
        case close(cancelInFlight: Bool)
    }

    /// Whether new requests are accepted.
    package var acceptsRequests: Bool { state == .running }

    /// Whether the owner has finished closing.
    package var isClosed: Bool { state == .closed }

    /// A `shutdown` call arrived.
    package mutating func shutdownRequested() -> ShutdownAction {
        switch state {
        case .running:
            state = .draining
            return .startDraining
        case .draining, .closing:
            return .waitUntilClosed
        case .closed:
            return .returnNow
        }
    }

    /// No request is in flight any more (reported while draining; reports at other times are ignored).
    package mutating func drained() -> DrainAction {
        guard state == .draining else { return .none }
        state = .closing
        return .close(cancelInFlight: false)
    }

    /// The grace period ended (or the caller of `shutdown` was cancelled) before the requests in flight did.
    package mutating func gracePeriodEnded() -> DrainAction {
        guard state == .draining else { return .none }
        state = .closing
        return .close(cancelInFlight: true)
    }

    /// The owner has closed everything: returns whether callers waiting for the close should now be resumed.
    package mutating func closeFinished() -> Bool {
        guard state == .closing else { return false }
        state = .closed
        return true
    }
}
