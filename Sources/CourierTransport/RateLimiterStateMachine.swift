package import CourierCore

/// Per-endpoint-key rate limiting with a token bucket, in FIFO order, plus server-imposed pauses.
///
/// Implemented as the generic cell rate algorithm (GCRA), the virtual-scheduling form of a token bucket:
/// each key keeps a theoretical arrival time (TAT). A request arriving at `t` for a limit of `r` per second with
/// burst `b` is admitted at `max(t, TAT − (b − 1)/r, pausedUntil)` and moves TAT to `max(TAT, t) + 1/r`.
/// Admission times never decrease for a key, so requests over the limit **wait in the order they came**; none
/// fails. A `Retry-After` from the server pauses the key until the given instant (clamped by the policy's cap).
///
/// Pure: the caller passes the current instant and sleeps until the returned admission time.
package struct RateLimiterStateMachine: Sendable {
    /// Held fixed-size (see `Deadline`): the loader admits every request here.
    private struct KeyState: Sendable {
        var tat: Deadline
        var pausedUntil: Deadline?
    }

    private var keys: [String: KeyState] = [:]
    private var admissionsSinceSweep = 0

    package init() {}

    /// Reserves the next slot for `key`. Returns the instant at which the request may go (`now` when it may
    /// go at once). With no limit only a server pause applies.
    package mutating func admit(key: String, limit: RateLimit?, now: ContinuousClock.Instant) -> ContinuousClock.Instant {
        admit(key: key, limit: limit, now: Deadline(now)).instant
    }

    /// ``admit(key:limit:now:)`` in the loader's instants. `key` is made only when it is looked up: without a
    /// limit, not while no key has state.
    package mutating func admit(key makeKey: @autoclosure () -> String, limit: RateLimit?, now: Deadline) -> Deadline {
        sweepIfNeeded(now: now)
        guard let limit, limit.requestsPerSecond > 0 else {
            // No limit: only a server pause applies, and a key that has none keeps no state.
            guard !keys.isEmpty else { return now }
            let key = makeKey()
            guard let paused = keys[key]?.pausedUntil else { return now }
            if paused > now { return paused }
            keys[key]?.pausedUntil = nil
            return now
        }
        let key = makeKey()
        // Looked up once (the key hashed once): a key with state is changed in place, a new one inserted.
        let index = keys.index(forKey: key)
        var state = index.map { keys.values[$0] } ?? KeyState(tat: now, pausedUntil: nil)
        var at = now
        if let paused = state.pausedUntil {
            if paused > now { at = paused } else { state.pausedUntil = nil }
        }
        let interval = Duration.seconds(1 / limit.requestsPerSecond)
        let tolerance = interval * Double(max(0, limit.burst - 1))
        let earliest = state.tat - tolerance
        if earliest > at { at = earliest }
        // Each admission consumes one emission interval from the later of TAT and the admission time, so a
        // pause does not let a whole burst through at once when it ends.
        state.tat = max(state.tat, at) + interval
        if let index { keys.values[index] = state } else { keys[key] = state }
        return at
    }

    /// Pauses `key` until `until` (a Retry-After); never shortens an existing pause.
    package mutating func pause(key: String, until: ContinuousClock.Instant) {
        pause(key: key, until: Deadline(until))
    }

    /// ``pause(key:until:)`` in the loader's instants.
    package mutating func pause(key: String, until: Deadline) {
        var state = keys[key] ?? KeyState(tat: until, pausedUntil: nil)
        if let existing = state.pausedUntil, existing >= until { return }
        state.pausedUntil = until
        keys[key] = state
    }

    /// The instant a key is paused until, if any.
    package func pausedUntil(key: String) -> ContinuousClock.Instant? { keys[key]?.pausedUntil?.instant }

    /// Number of keys with state (for tests and metrics).
    package var trackedKeys: Int { keys.count }

    /// Drops keys whose bucket is full again and whose pause is over, so memory follows active keys only.
    private mutating func sweepIfNeeded(now: Deadline) {
        admissionsSinceSweep += 1
        guard admissionsSinceSweep >= 4096 else { return }
        admissionsSinceSweep = 0
        keys = keys.filter { $0.value.tat > now || ($0.value.pausedUntil.map { $0 > now } ?? false) }
    }
}
