package import CourierCore
internal import DequeModule

/// One connection's pipeline: commands go out in the order they are sent, and each reply goes to the oldest
/// command still waiting for one (Redis answers in order). A pure state machine: no I/O, no clock; the owner
/// (`RedisConnection`) writes the bytes, reads the replies, runs the timer and resumes the callers.
///
/// - Many callers may send at once: their bytes gather in one outbox, and one writer at a time drains it, so a
///   burst of commands goes out in few writes.
/// - A command's deadline is absolute. When one passes with the reply not yet in, the connection is out of step
///   (the late reply would be taken for the next command's): every command on it fails with a timeout and the
///   owner closes it. One timer per connection is armed, for the earliest deadline it knows of.
/// - A cancelled caller leaves at once; its command stays in the queue, marked abandoned, and its reply is read
///   and dropped when it comes, so the stream stays in step and the connection stays open.
package struct RedisPipelineStateMachine: Sendable {
    package typealias CommandID = UInt64

    private struct Pending {
        var id: CommandID
        var deadline: Deadline
        var abandoned = false
    }

    /// Callers to fail, with one error.
    package struct Failure: Sendable, Equatable {
        package var ids: [CommandID]
        package var error: RedisError

        package init(ids: [CommandID], error: RedisError) {
            self.ids = ids
            self.error = error
        }
    }

    package enum SendAction: Sendable, Equatable {
        /// Queued. `startWriter`: no writer is running, so the owner starts one (it drains ``takeOutbox()``);
        /// `armTimer`: arm the connection's timer for this instant (earlier than any armed).
        case queued(startWriter: Bool, armTimer: Deadline?)
        /// Not queued: fail the caller with this error (the connection is closed, or the deadline already passed).
        case fail(RedisError)
    }

    package enum ReplyAction: Sendable, Equatable {
        /// Resume this caller with the reply.
        case deliver(CommandID, RESPValue)
        /// The reply was for an abandoned command: nothing to do.
        case drop
        /// A reply nobody asked for: close the connection (for this reason), fail these callers.
        case close(RedisError, [Failure])
    }

    package enum TimerAction: Sendable, Equatable {
        case none
        /// Arm the timer again, for the earliest deadline still waiting.
        case arm(Deadline)
        /// A deadline passed: close the connection (for this reason), fail these callers.
        case close(RedisError, [Failure])
    }

    private var pending = Deque<Pending>()
    private var outbox: [UInt8] = []
    private var writing = false
    private var armedTimer: Deadline?
    private var closedWith: RedisError?
    private let backend: String

    package init(backend: String) {
        self.backend = backend
    }

    /// Commands sent whose reply has not arrived (abandoned ones included).
    package var inFlight: Int { pending.count }

    /// Whether the connection was closed (by ``close(_:)``, a timeout or an unexpected reply).
    package var isClosed: Bool { closedWith != nil }

    /// A caller sends `bytes` (one command), to be answered by `deadline`.
    package mutating func send(_ id: CommandID, bytes: [UInt8], deadline: Deadline, now: Deadline) -> SendAction {
        if let closedWith { return .fail(closedWith) }
        guard deadline > now else {
            return .fail(RedisError(.timeout, "the command's deadline passed before it was sent", backend: backend))
        }
        pending.append(Pending(id: id, deadline: deadline))
        outbox.append(contentsOf: bytes)
        let startWriter = !writing
        writing = true
        var arm: Deadline?
        if armedTimer == nil || deadline < armedTimer! {
            armedTimer = deadline
            arm = deadline
        }
        return .queued(startWriter: startWriter, armTimer: arm)
    }

    /// The writer takes what is waiting to be written; nil when there is nothing (the writer stops, and the next
    /// ``send(_:bytes:deadline:now:)`` starts another) or the connection is closed.
    package mutating func takeOutbox() -> [UInt8]? {
        guard closedWith == nil, !outbox.isEmpty else {
            writing = false
            return nil
        }
        defer { outbox = [] }
        return outbox
    }

    /// A reply arrived.
    package mutating func replyReceived(_ value: RESPValue) -> ReplyAction {
        guard closedWith == nil else { return .drop }
        guard let first = pending.popFirst() else {
            let error = RedisError(.protocolViolation, "a reply arrived that no command asked for", backend: backend)
            return .close(error, close(error))
        }
        return first.abandoned ? .drop : .deliver(first.id, value)
    }

    /// The caller of `id` was cancelled: it leaves now, and its reply will be dropped. Returns false when the
    /// command is not waiting (its reply was delivered, or it failed).
    package mutating func abandon(_ id: CommandID) -> Bool {
        guard closedWith == nil, let index = pending.firstIndex(where: { $0.id == id && !$0.abandoned }) else { return false }
        pending[index].abandoned = true
        return true
    }

    /// The connection's timer fired.
    package mutating func timerFired(now: Deadline) -> TimerAction {
        armedTimer = nil
        guard closedWith == nil else { return .none }
        let live = pending.filter { !$0.abandoned }
        let expired = live.filter { $0.deadline <= now }
        guard expired.isEmpty else {
            let late = RedisError(.timeout, "no reply within the command's deadline; the connection was closed", backend: backend)
            let others = live.filter { $0.deadline > now }.map(\.id)
            closedWith = RedisError(.unavailable, "the connection was closed after a command timed out", backend: backend)
            pending = []
            outbox = []
            var failures = [Failure(ids: expired.map(\.id), error: late)]
            if !others.isEmpty {
                let follower = RedisError(.timeout, "the connection was closed when an earlier command's deadline passed", backend: backend)
                failures.append(Failure(ids: others, error: follower))
            }
            return .close(late, failures)
        }
        guard let earliest = live.map(\.deadline).min() else { return .none }
        armedTimer = earliest
        return .arm(earliest)
    }

    /// The connection closed (end of input, an error, a parse failure, or the owner closing it): every caller
    /// still waiting fails with `error`, and later sends fail at once.
    package mutating func close(_ error: RedisError) -> [Failure] {
        guard closedWith == nil else { return [] }
        closedWith = error
        let live = pending.filter { !$0.abandoned }.map(\.id)
        pending = []
        outbox = []
        armedTimer = nil
        return live.isEmpty ? [] : [Failure(ids: live, error: error)]
    }
}
