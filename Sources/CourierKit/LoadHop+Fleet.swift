internal import CourierCoordination
internal import CourierCore
internal import CourierRedis

/// The hop's steps for a fleet-scoped rate limit (issue 24; docs/fleet.md): the admission Redis gives, what the
/// policy's `on-unavailable` says when Redis cannot give one, and sharing a Retry-After with the fleet. Apart from
/// the plain path because a load whose limit is per process takes none of them.
extension LoadHop {
    /// When the attempt may go under the fleet's `limit`, given `local`, when the process's own limiter (its
    /// Retry-After pauses, and no limit of its own for this key) lets it go. One script, one round trip; the
    /// fleet reserves a slot only when the wait fits in the load's deadline.
    @inline(never)
    nonisolated(nonsending) mutating func admitFleet(_ fleet: FleetLink, limit: RateLimit, local: Deadline) async throws(CourierError) -> Deadline {
        let key = route.endpointKey
        // `now` paces the link's background start (once a second of real time) and times its leased slots (real
        // time too, as Redis's are): on a manual clock, the real now.
        let arrival = fleet.arrive(key, limit: limit, now: service.realDeadline(arrived))
        if arrival?.leased == true {
            // A slot this process leased: no call, no suspension (the common case under a busy limit).
            fleet.note(available: true)
            return max(local, arrived)
        }
        let admission = await fleet.admit(arrival, limit: limit, maxWait: max(.zero, deadline - arrived))
        switch admission {
        case .go(let wait), .wouldWaitTooLong(let wait):
            fleet.note(available: true)
            // From when the answer came: Redis reserved the slot between the request and the reply, so this is
            // never early.
            let at = service.now() + wait
            if wait > .zero { execution.trace(machine.attempt, .coordination(.fleetWait(key: key, wait: wait))) }
            return max(local, at)
        case .unavailable(let error):
            fleet.note(available: false, error: error)
            execution.trace(machine.attempt, .coordination(.unavailable(backend: fleet.backend, onUnavailable: fleet.onUnavailable.rawValue)))
            switch fleet.onUnavailable {
            case .local:
                let share = FleetShare.local(limit, liveInstances: fleet.liveInstances)
                return max(local, service.admitLocalShare(key: key, limit: share, now: arrived))
            case .open:
                return local
            case .closed:
                throw CourierError(
                    .coordination,
                    "the fleet rate limit for \(key) could not be asked of \(fleet.backend) (\(error.kind.rawValue): \(error.message)), and the policy says on-unavailable: closed",
                    url: requestURL, cause: error
                )
            }
        }
    }

    /// Shares a Retry-After pause of `until` with the fleet (the process has already paused the key itself). A
    /// Redis that cannot be asked loses only the sharing: this process still honours the pause.
    @inline(never)
    nonisolated(nonsending) func shareFleetPause(_ fleet: FleetLink, limit: RateLimit, until: Deadline) async {
        let key = route.endpointKey
        let duration = until - service.now()
        guard duration > .zero else { return }
        switch await fleet.pause(key, limit: limit, for: duration) {
        case .success:
            fleet.note(available: true)
            execution.trace(machine.attempt, .coordination(.pauseShared(key: key, duration: duration)))
        case .failure(let error):
            fleet.note(available: false, error: error)
        }
    }
}
