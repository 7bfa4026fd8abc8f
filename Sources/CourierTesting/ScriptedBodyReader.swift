internal import CourierCore
internal import Synchronization

/// Carries out a ``MockBodyPlan`` for a ``ScriptedTransport``'s body: its bytes chunk by chunk as the loader reads,
/// its waits slept on the transport's clock (each counted from the request's arrival, so that they do not drift),
/// and a connection-lost error where the plan is cut.
final class ScriptedBodyReader: Sendable {
    private let plan: MockBodyPlan
    private let clock: LoaderClock
    /// The next step, and the instant the waits so far add up to.
    private let position: Mutex<(step: Int, due: Deadline)>

    init(_ plan: MockBodyPlan, clock: LoaderClock, from start: Deadline) {
        self.plan = plan
        self.clock = clock
        self.position = Mutex((0, start))
    }

    /// Sleeps for `duration` after the waits so far.
    func wait(_ duration: Duration) async throws {
        guard duration > .zero else { return }
        let due = position.withLock { position -> Deadline in
            position.due += duration
            return position.due
        }
        try await clock.sleep(until: due)
    }

    /// The next bytes of the body, nil at its end; throws where the plan is cut.
    func next() async throws -> [UInt8]? {
        while true {
            let step = position.withLock { position -> MockBodyPlan.Step? in
                guard position.step < plan.steps.count else { return nil }
                defer { position.step += 1 }
                return plan.steps[position.step]
            }
            switch step {
            case .bytes(let bytes): return Array(bytes)
            case .wait(let duration): try await wait(duration)
            case .chunkStart, .chunkEnd: continue
            case nil:
                guard plan.isCut else { return nil }
                throw CourierError(
                    .protocol, "ScriptedTransport: the connection closed after \(plan.bytesSent) body bytes (scripted)"
                ).classified(.connectionLost)
            }
        }
    }
}
