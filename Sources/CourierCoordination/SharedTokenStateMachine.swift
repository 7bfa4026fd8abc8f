package import CourierCore
package import CourierRedis

/// One ``RedisTokenStore/obtain(identity:waitingAtMost:isUsable:refresh:)`` as a pure state machine: which Redis
/// command comes next, when to wait and when to give up. No I/O, no clock reads (time and jitter come in with the
/// events), no record bytes (the owner keeps the last record read and judges it usable).
///
///     start ─▶ read ─usable─▶ deliver
///               └─not usable─▶ acquireLock ─acquired─▶ read ─usable─▶ deliver(release)
///                                  │                     └─not usable─▶ refresh (write, release: the end)
///                                  └─busy─▶ sleep ─woke─▶ read ─usable─▶ deliver
///                                     (deadline passed: fail)  └─not usable─▶ acquireLock (take over a lapsed lock)
///
/// A Redis failure anywhere is decided by the fallback: refresh locally, or fail closed.
package struct SharedTokenStateMachine: Sendable {
    package enum Action: Sendable, Equatable {
        /// `GET` the record; report it with ``recordRead(usable:)``.
        case read
        /// `SET lock owner NX PX lease`; report with ``lockAnswered(acquired:now:jitter:)``.
        case acquireLock
        /// Wait until then, then report ``woke()``.
        case sleep(until: Deadline)
        /// Return the record last read; release the lock first when `release`.
        case deliver(release: Bool)
        /// The lock is held and the record is still not usable: refresh once with the record last read, write the
        /// result, release the lock and return it. The machine is done.
        case refresh
        /// Redis is unavailable and the fallback is ``TokenStoreFallback/local``: refresh in this process with the
        /// record last read (if any), write nothing. The machine is done.
        case refreshLocally
        case fail(Failure)
    }

    package enum Failure: Sendable, Equatable {
        /// Redis failed and the fallback is ``TokenStoreFallback/failClosed``.
        case unavailable(RedisError)
        /// Another instance held the lock and no usable record appeared by the deadline.
        case waitTimedOut
    }

    private enum Phase {
        case idle
        case firstRead
        case locking
        case sleeping
        case polling
        case holdingRead
        case done
    }

    private var phase = Phase.idle
    private let deadline: Deadline
    private let poll: ClosedRange<Duration>
    private let fallback: TokenStoreFallback

    /// - Parameters:
    ///   - deadline: when a waiter gives up (now + the authoriser's timeout).
    ///   - poll: the range a waiter's pause between reads is drawn from.
    package init(deadline: Deadline, poll: ClosedRange<Duration>, fallback: TokenStoreFallback) {
        self.deadline = deadline
        self.poll = poll
        self.fallback = fallback
    }

    package mutating func start() -> Action {
        precondition(phase == .idle, "Invalid state: \(phase)")
        phase = .firstRead
        return .read
    }

    /// The record was read; `usable` is the caller's verdict (false when there is none).
    package mutating func recordRead(usable: Bool) -> Action {
        switch phase {
        case .firstRead, .polling:
            if usable { return finish(.deliver(release: false)) }
            phase = .locking
            return .acquireLock
        case .holdingRead:
            return finish(usable ? .deliver(release: true) : .refresh)
        case .idle, .locking, .sleeping, .done:
            preconditionFailure("Invalid state: \(phase)")
        }
    }

    /// The lock was taken (this instance now holds it) or is held by another. `jitter` (0…1) places the pause
    /// within ``poll``, so that waiting instances do not read in lock-step.
    package mutating func lockAnswered(acquired: Bool, now: Deadline, jitter: Double) -> Action {
        precondition(phase == .locking, "Invalid state: \(phase)")
        if acquired {
            phase = .holdingRead
            return .read
        }
        guard now < deadline else { return finish(.fail(.waitTimedOut)) }
        let span = poll.upperBound - poll.lowerBound
        let pause = poll.lowerBound + span * min(max(jitter, 0), 1)
        phase = .sleeping
        return .sleep(until: min(now + pause, deadline))
    }

    package mutating func woke() -> Action {
        precondition(phase == .sleeping, "Invalid state: \(phase)")
        phase = .polling
        return .read
    }

    /// A command failed (not by cancellation). Whatever the phase, the fallback decides.
    package mutating func redisFailed(_ error: RedisError) -> Action {
        precondition(phase != .idle && phase != .done, "Invalid state: \(phase)")
        switch fallback {
        case .local: return finish(.refreshLocally)
        case .failClosed: return finish(.fail(.unavailable(error)))
        }
    }

    private mutating func finish(_ action: Action) -> Action {
        phase = .done
        return action
    }
}
