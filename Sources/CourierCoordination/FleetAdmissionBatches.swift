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

    /// By Redis key: the requests waiting behind the call in flight (present while one is).
    private let waiting = Mutex<[String: [Waiter]]>([:])

    /// The admission of one request for `key` with `maxWait`; `send` makes one script call for a batch (the longest
    /// waits, in order) and returns one admission per member, in the same order.
    func admit(
        key: String, maxWait: Duration?, send: (_ maxWaits: [Duration?]) async -> [FleetAdmission]
    ) async -> FleetAdmission {
        var followers: [Waiter]
        let leadsNow = waiting.withLock { table -> Bool in
            guard table[key] == nil else { return false }
            table[key] = []
            return true
        }
        if leadsNow {
            followers = []
        } else {
            let turn = await withCheckedContinuation { (continuation: CheckedContinuation<Turn, Never>) in
                // The call in flight may have ended meanwhile: then this request leads.
                let leads = waiting.withLock { table -> Bool in
                    guard table[key] != nil else {
                        table[key] = []
                        return true
                    }
                    table[key]!.append(Waiter(maxWait: maxWait, continuation: continuation))
                    return false
                }
                if leads { continuation.resume(returning: .lead(followers: [])) }
            }
            switch turn {
            case .admitted(let admission): return admission
            case .lead(let batch): followers = batch
            }
        }
        let admissions = await send([maxWait] + followers.map(\.maxWait))
        for (follower, admission) in zip(followers, admissions.dropFirst()) {
            follower.continuation.resume(returning: .admitted(admission))
        }
        // The turn passes to the first of those that came meanwhile, with the rest of them (up to the largest
        // batch) as its followers; none came: the key has no call in flight.
        let next = waiting.withLock { table -> (Waiter, [Waiter])? in
            guard let queued = table[key], let first = queued.first else {
                table[key] = nil
                return nil
            }
            let taken = min(queued.count, Self.largestBatch)
            table[key] = Array(queued[taken...])
            return (first, Array(queued[1..<taken]))
        }
        if let (first, rest) = next { first.continuation.resume(returning: .lead(followers: rest)) }
        return admissions.first ?? .unavailable(.init(.protocolViolation, "the admission script answered no admission", backend: ""))
    }
}
