internal import Glibc
internal import Synchronization
internal import CourierCore

/// The readiness core under ``TCPConnection`` and ``TCPListener``: one non-blocking descriptor registered
/// once (edge-triggered, read and write) with one ``EventLoop``.
///
/// Operations run on the *caller's* thread: `perform` tries the system call at once and parks the task on a
/// continuation only when the call would block; the loop thread then just resumes it, and the caller
/// retries. Lost wake-ups are impossible because each direction has an epoch that the loop bumps on every
/// readiness edge: the caller notes the epoch before the call and, if it changed by the time it parks,
/// retries instead of sleeping. The same epochs let a read skip the `recv` that would only return EAGAIN
/// when the previous read already emptied the receive buffer and no edge arrived since.
///
/// Closing is safe from any thread at any time. While another thread is inside a system call on the
/// descriptor (`users > 0`), the `close(2)` is deferred to whoever leaves last, so a descriptor number is
/// never closed under a running call (where the kernel could hand the number to someone else).
final class IOChannel: SelectableHandler {
    enum Direction {
        case read
        case write

        var operationName: String { self == .read ? "read" : "write" }
    }

    /// Who waits for readiness in one direction.
    private enum Waiter {
        case none
        /// A parked task; past `deadline` (when `budget`, the wait the operation was given, is not nil) it fails
        /// with a timeout.
        case task(UnsafeContinuation<Void, any Error>, deadline: Deadline, budget: Duration?)
        /// A callback (used by the connector while a connect is in flight).
        case callback(@Sendable (Result<Void, any Error>) -> Void)

        var deadline: Deadline {
            if case .task(_, let deadline, _) = self { return deadline }
            return .distantFuture
        }

        func resume(_ result: Result<Void, any Error>) {
            switch self {
            case .none: break
            case .task(let continuation, _, _): continuation.resume(with: result)
            case .callback(let callback): callback(result)
            }
        }
    }

    private struct State {
        var registrationID: UInt32 = 0
        var readEpoch: UInt64 = 0
        var writeEpoch: UInt64 = 0
        var reader = Waiter.none
        var writer = Waiter.none
        var readBusy = false
        var writeBusy = false
        /// Threads inside a system call on the descriptor right now.
        var users = 0
        /// The read epoch at which a read came back short (fewer bytes than asked for), i.e. emptied the
        /// receive buffer. While the epoch is unchanged no byte has arrived since (every arrival raises a
        /// new edge), so the next read parks without a `recv` that could only say EAGAIN.
        var readDrainedEpoch: UInt64?
        /// The peer's FIN (or an error) was reported. End of file raises no further edge, so after it the
        /// "drained" shortcut must not be taken: the next `recv` has to run to see the 0.
        var peerHungUp = false
        var open = true
        /// Closed while `users > 0`: the last user closes the descriptor.
        var closeDeferred = false
        /// Bytes to send once the descriptor has left the loop, just before `close(2)` (see `close(sendingLast:)`).
        var lastBytes: [UInt8] = []
        /// What waiters (and a caller caught mid-call) are told about the close.
        var closeReason: any Error = ConnectionError.closed
        /// When set, `closeReason` concerns only this direction; the other one is just "closed".
        var closeReasonDirection: Direction?

        func closeReason(for direction: Direction) -> any Error {
            if let only = closeReasonDirection, only != direction { return ConnectionError.closed }
            return closeReason
        }
        /// Deadline of the earliest idle timer scheduled for this channel, if any.
        var timerDeadline: Deadline?
        /// Timers scheduled and not yet fired, cancelled at close. They hold the channel strongly (a weak
        /// reference would give the channel a side table and make every retain of it take the slow path).
        var timers: [(deadline: Deadline, id: TimerID)] = []
        /// Times a task parked; tests use it to prove a write really waited for EPOLLOUT.
        var parkCount = 0

        func epoch(_ direction: Direction) -> UInt64 { direction == .read ? readEpoch : writeEpoch }
    }

    /// Work to do after the lock is released.
    private struct CloseWork {
        var reader = Waiter.none
        var writer = Waiter.none
        var readerReason: any Error = ConnectionError.closed
        var writerReason: any Error = ConnectionError.closed
        var closeDescriptor = false
        /// Sent between deregistering and closing the descriptor.
        var lastBytes: [UInt8] = []
        var timers: [TimerID] = []

        /// The work of the last user of a channel whose close was deferred: closing the descriptor.
        static func deferred(_ state: inout State) -> CloseWork {
            state.closeDeferred = false
            defer { state.lastBytes = [] }
            return CloseWork(closeDescriptor: true, lastBytes: state.lastBytes)
        }
    }

    let fd: Int32
    let loop: EventLoop
    private let descriptor: FileDescriptor
    private let state = Mutex(State())

    private init(descriptor: FileDescriptor, loop: EventLoop) {
        self.fd = descriptor.rawValue
        self.descriptor = descriptor
        self.loop = loop
    }

    /// Registers `descriptor` with `loop`. On failure the descriptor is closed.
    static func register(
        _ descriptor: FileDescriptor,
        on loop: EventLoop,
        interest: SelectorInterest
    ) throws -> IOChannel {
        let channel = IOChannel(descriptor: descriptor, loop: loop)
        do {
            let id = try loop.register(fd: descriptor.rawValue, interest: interest, handler: channel)
            channel.state.withLock { $0.registrationID = id }
        } catch {
            channel.state.withLock { $0.open = false }
            descriptor.close()
            throw error
        }
        return channel
    }

    var isOpen: Bool { state.withLock { $0.open } }

    /// True when, as far as the loop has seen, no byte and no hang-up arrived since a read last drained the
    /// socket: with edge-triggered epoll every arrival bumps the read epoch, so this is known without a system
    /// call. False only means "unknown": peek to find out.
    var isQuietSinceLastDrain: Bool {
        state.withLock { $0.open && $0.readDrainedEpoch == $0.readEpoch && !$0.peerHungUp }
    }

    /// Number of times a task parked waiting for readiness.
    var parkCount: Int { state.withLock { $0.parkCount } }

    func currentEpoch(_ direction: Direction) -> UInt64 {
        state.withLock { $0.epoch(direction) }
    }

    // MARK: - Operations

    /// Runs `operation` until it does not block, parking on the loop in between.
    ///
    /// Any error closes the channel: the operation's own ``SystemCallError``, a timeout (no readiness before
    /// `deadline`, however many times the task parked), cancellation of the waiting task (`CancellationError`), or
    /// a concurrent close.
    ///
    /// `deadline` is absolute (a request's, carried down unchanged); `idle` bounds this operation's wait from when it
    /// first parks. This is the one place the two meet: the wait ends at `min(now + idle, deadline)`.
    nonisolated(nonsending) func perform<T>(
        _ direction: Direction,
        deadline: Deadline?,
        idle: Duration? = nil,
        drained: (T) -> Bool = { _ in false },
        _ operation: (Int32) throws(SystemCallError) -> IOResult<T>
    ) async throws -> T {
        var (epoch, skipAttempt) = try enter(direction)
        // Under way until this returns, parked or not, however it ends (what an adaptive loop counts).
        loop.operationStarted()
        defer { loop.operationEnded() }
        // The wait this operation was given, for a timeout's message (to the millisecond: the caller's own figure).
        // Taken when it first parks: most operations never do, and then need no clock read.
        var budget: Duration?
        var due: Deadline?
        while true {
            if !skipAttempt {
                let result: IOResult<T>
                do {
                    result = try operation(fd)
                } catch {
                    leave(direction, failure: error, drainedAt: nil)
                    throw error
                }
                if case .processed(let value) = result {
                    leave(direction, failure: nil, drainedAt: drained(value) ? epoch : nil)
                    return value
                }
            }
            skipAttempt = false
            if budget == nil, deadline != nil || idle != nil {
                let now = Deadline.now()
                let end = min(idle.map { now + $0 } ?? .distantFuture, deadline ?? .distantFuture)
                due = end
                budget = end < now ? .zero : .milliseconds(((end - now) / .milliseconds(1)).rounded())
            }
            do {
                epoch = try await park(direction, since: epoch, deadline: due, budget: budget)
            } catch {
                state.withLock { state in
                    if direction == .read { state.readBusy = false } else { state.writeBusy = false }
                }
                throw error
            }
        }
    }

    /// Runs `body` with the descriptor if the channel is open, keeping a close from racing with it.
    func withDescriptor<R>(_ body: (Int32) throws -> R) rethrows -> R? {
        let entered = state.withLock { state -> Bool in
            guard state.open else { return false }
            state.users += 1
            return true
        }
        guard entered else { return nil }
        defer { releaseUser() }
        return try body(fd)
    }

    /// Marks the direction busy; returns the epoch to compare against when parking, and whether the
    /// attempt can be skipped because the last read drained the socket and no readiness edge came since.
    private func enter(_ direction: Direction) throws -> (epoch: UInt64, skipAttempt: Bool) {
        try state.withLock { state throws -> (UInt64, Bool) in
            guard state.open else { throw ConnectionError.closed }
            if direction == .read {
                guard !state.readBusy else { throw ConnectionError.concurrentOperation("read") }
                state.readBusy = true
            } else {
                guard !state.writeBusy else { throw ConnectionError.concurrentOperation("write") }
                state.writeBusy = true
            }
            state.users += 1
            let epoch = state.epoch(direction)
            return (epoch, direction == .read && state.readDrainedEpoch == epoch && !state.peerHungUp)
        }
    }

    private func leave(_ direction: Direction, failure: (any Error)?, drainedAt: UInt64?) {
        var work: CloseWork?
        state.withLock { state in
            if direction == .read {
                state.readBusy = false
                state.readDrainedEpoch = drainedAt
            } else {
                state.writeBusy = false
            }
            state.users -= 1
            if let failure, state.open {
                work = Self.beginClose(&state, reason: failure)
            } else if state.closeDeferred && state.users == 0 {
                work = CloseWork.deferred(&state)
            }
        }
        if let work { finishClose(work) }
    }

    private func releaseUser() {
        let work = state.withLock { state -> CloseWork? in
            state.users -= 1
            guard state.closeDeferred && state.users == 0 else { return nil }
            return CloseWork.deferred(&state)
        }
        if let work { finishClose(work) }
    }

    private enum ParkOutcome {
        case parked
        case parkedArmTimer(Deadline)
        case retry
        case failed(any Error, CloseWork?)
    }

    /// Parks the task until `direction` becomes ready again; returns the epoch to retry with.
    nonisolated(nonsending) private func park(
        _ direction: Direction, since epoch: UInt64, deadline: Deadline?, budget: Duration?
    ) async throws -> UInt64 {
        try await CancellationScope.withCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> ParkOutcome in
                    state.users -= 1
                    guard state.open else {
                        var work: CloseWork?
                        if state.closeDeferred && state.users == 0 {
                            work = CloseWork.deferred(&state)
                        }
                        return .failed(state.closeReason(for: direction), work)
                    }
                    if CancellationScope.isCancelled {
                        let work = Self.beginClose(&state, reason: CancellationError(), only: direction)
                        return .failed(CancellationError(), work)
                    }
                    if state.epoch(direction) != epoch { return .retry }
                    let due = deadline ?? .distantFuture
                    let waiter = Waiter.task(continuation, deadline: due, budget: budget)
                    if direction == .read { state.reader = waiter } else { state.writer = waiter }
                    state.parkCount += 1
                    if deadline != nil && due < (state.timerDeadline ?? .distantFuture) {
                        state.timerDeadline = due
                        return .parkedArmTimer(due)
                    }
                    return .parked
                }
                switch outcome {
                case .parked:
                    break
                case .parkedArmTimer(let deadline):
                    armTimer(at: deadline)
                case .retry:
                    continuation.resume()
                case .failed(let error, let work):
                    if let work { finishClose(work) }
                    continuation.resume(throwing: error)
                }
            }
            return try state.withLock { state throws -> UInt64 in
                guard state.open else { throw state.closeReason(for: direction) }
                state.users += 1
                return state.epoch(direction)
            }
        } onCancel: {
            self.close(reason: CancellationError(), only: direction)
        }
    }

    /// Waits for the descriptor to become writable (a non-blocking connect finishing) without a task.
    ///
    /// - Returns: false when the write epoch already moved past `epoch` or the channel is closed; `callback`
    ///   is then not stored (and never called) and the caller checks the descriptor itself.
    func awaitWritable(since epoch: UInt64, _ callback: @escaping @Sendable (Result<Void, any Error>) -> Void) -> Bool {
        state.withLock { state -> Bool in
            guard state.open, state.writeEpoch == epoch else { return false }
            state.writer = .callback(callback)
            return true
        }
    }

    /// Waits for the descriptor to become readable again without a task: `callback` runs on the loop thread at the
    /// next readiness edge (or with the close reason when the channel closes). For a reader that reacts where
    /// bytes arrive (``TCPConnection/receiveContinuously(maxBytes:_:)``).
    ///
    /// - Returns: false when the read epoch already moved past `epoch` or the channel is closed; `callback` is
    ///   then not stored (and never called) and the caller reads again itself.
    func awaitReadable(since epoch: UInt64, _ callback: @escaping @Sendable (Result<Void, any Error>) -> Void) -> Bool {
        state.withLock { state -> Bool in
            guard state.open, state.readEpoch == epoch else { return false }
            state.reader = .callback(callback)
            return true
        }
    }

    // MARK: - Closing

    /// Closes the channel (once); waiters are resumed with `reason`.
    ///
    /// With `only`, just that direction's waiter gets `reason` and the other gets ``ConnectionError/closed``:
    /// a cancellation or a timeout belongs to the task that was waiting, not to its peer in the other
    /// direction.
    func close(reason: any Error = ConnectionError.closed, only direction: Direction? = nil) {
        let work = state.withLock { state -> CloseWork? in
            guard state.open else { return nil }
            return Self.beginClose(&state, reason: reason, only: direction)
        }
        if let work { finishClose(work) }
    }

    /// Closes the channel like ``close(reason:only:)``, sending `lastBytes` (best effort, never waiting) after the
    /// descriptor has left the loop's epoll set and just before it is closed. A peer that has closed its end
    /// answers them with a reset, whose event would otherwise wake the loop for a channel nobody waits on (two
    /// context switches). Nothing is sent when the channel was already closed.
    func close(sendingLast lastBytes: [UInt8]) {
        let work = state.withLock { state -> CloseWork? in
            guard state.open else { return nil }
            state.lastBytes = lastBytes
            return Self.beginClose(&state, reason: ConnectionError.closed)
        }
        if let work { finishClose(work) }
    }

    private static func beginClose(_ state: inout State, reason: any Error, only direction: Direction? = nil) -> CloseWork {
        state.open = false
        state.closeReason = reason
        state.closeReasonDirection = direction
        var work = CloseWork()
        if direction != .write { work.readerReason = reason }
        if direction != .read { work.writerReason = reason }
        swap(&work.reader, &state.reader)
        swap(&work.writer, &state.writer)
        work.timers = state.timers.map(\.id)
        state.timers.removeAll()
        if state.users == 0 {
            work.closeDescriptor = true
            swap(&work.lastBytes, &state.lastBytes)
        } else {
            state.closeDeferred = true
        }
        return work
    }

    private func finishClose(_ work: CloseWork) {
        for timer in work.timers { loop.cancelTimer(timer) }
        if work.closeDescriptor {
            let id = state.withLock { $0.registrationID }
            loop.deregister(fd: fd, id: id)
            if !work.lastBytes.isEmpty { _ = try? work.lastBytes.withUnsafeBytes { try Syscall.send(fd, $0) } }
            descriptor.close()
        }
        work.reader.resume(.failure(work.readerReason))
        work.writer.resume(.failure(work.writerReason))
    }

    // MARK: - Loop callbacks

    func selectorReady(_ events: SelectorEvents) {
        var reader = Waiter.none
        var writer = Waiter.none
        state.withLock { state in
            if !events.isDisjoint(with: [.readHangup, .error]) { state.peerHungUp = true }
            if !events.isDisjoint(with: [.readable, .readHangup, .error]) {
                state.readEpoch &+= 1
                swap(&reader, &state.reader)
            }
            if !events.isDisjoint(with: [.writable, .error]) {
                state.writeEpoch &+= 1
                swap(&writer, &state.writer)
            }
        }
        reader.resume(.success(()))
        writer.resume(.success(()))
    }

    func eventLoopDidShutDown() {
        close(reason: ConnectionError.closed)
    }

    // MARK: - Idle timer

    private func armTimer(at deadline: Deadline) {
        let id = loop.scheduleTimer(at: deadline) { [self] in timerFired() }
        let cancelNow = state.withLock { state -> Bool in
            guard state.open else { return true }
            state.timers.append((deadline, id))
            return false
        }
        if cancelNow { loop.cancelTimer(id) }
    }

    /// Timers are lazy: a park only schedules one when its deadline is earlier than the one already armed,
    /// so a connection doing many short reads under the same timeout keeps a single timer. When it fires it
    /// fails the waiters that are due and re-arms for the earliest remaining deadline.
    private func timerFired() {
        let now = Deadline.now()
        var work: CloseWork?
        var rearm: Deadline?
        state.withLock { state in
            if let armed = state.timerDeadline, armed <= now { state.timerDeadline = nil }
            state.timers.removeAll { $0.deadline <= now }
            guard state.open else { return }
            if state.reader.deadline <= now, case .task(_, _, let budget?) = state.reader {
                work = Self.beginClose(&state, reason: ConnectionError.readTimeout(budget), only: .read)
            } else if state.writer.deadline <= now, case .task(_, _, let budget?) = state.writer {
                work = Self.beginClose(&state, reason: ConnectionError.writeTimeout(budget), only: .write)
            } else {
                let next = min(state.reader.deadline, state.writer.deadline)
                if next != .distantFuture && next < (state.timerDeadline ?? .distantFuture) {
                    state.timerDeadline = next
                    rearm = next
                }
            }
        }
        if let work { finishClose(work) }
        if let rearm { armTimer(at: rearm) }
    }
}
