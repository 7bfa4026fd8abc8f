internal import CourierCore
internal import CourierRedis
internal import Synchronization

/// One process's admissions for fleet-limited keys, batched: while one admission script call for a key is in flight,
/// the requests that arrive for the same key wait together, and the first of them then sends one call for all of
/// them (``FleetScripts/admit`` takes a list of requests and admits them in order, as that many calls would). A
/// round trip's cost (its thread wake-ups, its bytes, Redis's script run) is paid once per batch instead of once per
/// request, and requests keep the order they came in. A request alone pays one call, as before.
///
/// Each call is made by a caller, never by a task of the batcher's: the caller whose turn it is (the first to come,
/// then the first of each batch that waited) sends for the batch, hands every other member its admission, and passes
/// the turn to the first of the next batch.
///
/// A key this process loads often under a limit with room also leases slots ahead (``FleetLeases``): a call asks for
/// a few zero-wait slots beyond its batch, and the requests that come next (those already waiting first, in order)
/// take them with no call at all.
final class FleetAdmissionBatches: Sendable {
    /// A request waiting for its batch: its longest acceptable wait, and where its turn or its answer goes.
    struct Waiter: Sendable {
        var maxWait: Duration?
        var continuation: CheckedContinuation<Turn, Never>
    }

    /// What a waiting request is told.
    enum Turn: Sendable {
        /// Send the call for yourself and these (in order, after you).
        case lead(followers: [Waiter])
        /// Your admission, from a call another request sent.
        case admitted(FleetAdmission)
    }

    /// The largest batch: the script's argument list and reply grow with it.
    static let largestBatch = 256

    private struct State {
        /// By Redis key: the requests waiting behind the call in flight (present while one is).
        var waiting: [String: [Waiter]] = [:]
        var leases = FleetLeases()
    }

    private let state = Mutex(State())

    private enum Start {
        case leased
        case lead
        case wait
    }

    /// A request for `key` arrives at `now` and is counted as demand: true when it takes a leased slot (it goes at
    /// once, with no call); false when ``admit(key:maxWait:requestsPerSecond:send:)`` is to admit it.
    func arrive(key: String, now: Deadline) -> Bool {
        state.withLock { $0.leases.arrived(key, now: now) }
    }

    /// The admission of one request for `key` (counted by ``arrive(key:now:)``, which found no leased slot) (whose limit allows `requestsPerSecond`) with `maxWait`; `send` makes
    /// one script call for a batch (the longest waits, in order) and returns one admission per entry, in the same
    /// order.
    func admit(
        key: String, maxWait: Duration?, requestsPerSecond: Double, send: (_ maxWaits: [Duration?]) async -> [FleetAdmission]
    ) async -> FleetAdmission {
        let now = Deadline.now()
        let start = state.withLock { state -> Start in
            // Counted on arrival (``arrive(key:now:)``), which found no slot: one may have been leased since.
            if state.leases.takeSlot(key, now: now) { return .leased }
            guard state.waiting[key] == nil else { return .wait }
            state.waiting[key] = []
            return .lead
        }
        var followers: [Waiter] = []
        switch start {
        case .leased:
            return .go(after: .zero)
        case .lead:
            break
        case .wait:
            let turn = await withCheckedContinuation { (continuation: CheckedContinuation<Turn, Never>) in
                // The call in flight may have ended meanwhile: then this request takes a slot it left, or leads.
                let turn = state.withLock { state -> Turn? in
                    guard state.waiting[key] != nil else {
                        if state.leases.takeSlot(key, now: .now()) { return .admitted(.go(after: .zero)) }
                        state.waiting[key] = []
                        return .lead(followers: [])
                    }
                    state.waiting[key]!.append(Waiter(maxWait: maxWait, continuation: continuation))
                    return nil
                }
                if let turn { continuation.resume(returning: turn) }
            }
            switch turn {
            case .admitted(let admission): return admission
            case .lead(let batch): followers = batch
            }
        }
        let members = [maxWait] + followers.map(\.maxWait)
        let extra = state.withLock { $0.leases.extra(key, requestsPerSecond: requestsPerSecond) }
        let admissions = await send(members + Array(repeating: Duration.zero, count: extra))
        let answered = Deadline.now()
        for (follower, admission) in zip(followers, admissions.dropFirst()) {
            follower.continuation.resume(returning: .admitted(admission))
        }
        let granted = admissions.dropFirst(members.count).filter { $0 == .go(after: .zero) }.count
        let hadRoom = admissions.count == members.count + extra && admissions.prefix(members.count).allSatisfy { $0 == .go(after: .zero) }
        // Those that came meanwhile take the slots just leased, in order; the turn passes to the first of the rest,
        // with the others (up to the largest batch) as its followers; none left: the key has no call in flight.
        let (leased, next) = state.withLock { state -> ([Waiter], (Waiter, [Waiter])?) in
            state.leases.answered(key, granted: granted, hadRoom: hadRoom, now: answered)
            let waiting = state.waiting[key] ?? []
            var served = 0
            while served < waiting.count, state.leases.takeSlot(key, now: answered) { served += 1 }
            let leased = Array(waiting[..<served])
            let queued = waiting[served...]
            guard let first = queued.first else {
                state.waiting[key] = nil
                return (leased, nil)
            }
            let end = queued.startIndex + min(queued.count, Self.largestBatch)
            state.waiting[key] = Array(queued[end...])
            return (leased, (first, Array(queued[(queued.startIndex + 1)..<end])))
        }
        for waiter in leased { waiter.continuation.resume(returning: .admitted(.go(after: .zero))) }
        if let (first, rest) = next { first.continuation.resume(returning: .lead(followers: rest)) }
        return admissions.first ?? .unavailable(.init(.protocolViolation, "the admission script answered no admission", backend: ""))
    }

    /// A pause (Retry-After) for `key`: the slots this process leased are dropped.
    func dropLeases(_ key: String) {
        state.withLock { $0.leases.drop(key) }
    }
}
