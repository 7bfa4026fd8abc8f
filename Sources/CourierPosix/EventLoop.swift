internal import Glibc
internal import Synchronization
package import CourierCore

/// One thread that waits for socket readiness (epoll), runs submitted work and fires timers.
///
/// Work and timers may be added from any thread. The loop only sleeps in `epoll_wait`, and only a submitter
/// that finds it asleep pays for a wake-up (an eventfd write); work added from the loop thread itself or
/// while the loop is busy costs a lock and an array append. Timers live in a heap; the earliest deadline
/// becomes the `epoll_wait` timeout.
///
/// Loops are created and shut down by an ``EventLoopGroup``.
package final class EventLoop: Sendable, CustomStringConvertible {
    typealias Work = @Sendable () -> Void

    /// One item of the loop's run queue: a closure, or a Swift task job when the loop is used as a
    /// `TaskExecutor`.
    private enum Runnable {
        case closure(Work)
        case job(UnownedJob)
    }

    private struct Registration {
        var id: UInt32
        var handler: any SelectableHandler
        /// False until `register` has made its `epoll_ctl` and returned. Shut-down tells only confirmed
        /// registrations (closing their descriptors); one still being made is failed by `register` itself, so a
        /// descriptor is never closed under a registering thread that is about to hand it to epoll.
        var confirmed: Bool
    }

    private enum Lifecycle {
        case running
        case shuttingDown
        case shutDown
    }

    private struct State {
        var work: [Runnable] = []
        var timers = TimerHeap<Work>()
        var registrations: [Int32: Registration] = [:]
        var nextRegistrationID: UInt32 = 1
        /// True while the loop thread is (about to be) inside `epoll_wait` with a non-zero timeout.
        var sleeping = false
        /// When the sleeping loop will wake by itself.
        var sleepDeadline = Deadline.distantFuture
        /// A wake-up was sent and not yet observed.
        var wakeupPending = false
        var lifecycle = Lifecycle.running
    }

    /// Position of this loop in its group.
    package let index: Int
    let selector: PlatformSelector
    private let state = Mutex(State())
    /// Uses of the selector's descriptors under way on any thread (a wake-up's eventfd write, an `epoll_ctl`),
    /// plus ``selectorClosedBit`` once the loop closes them. A use that starts after the bit is set does nothing,
    /// and the loop closes only once the uses that started before have ended, so a wake-up decided just before
    /// shut-down (the loop may be awake, see the request, stop and close at once) never reaches a closed, or by
    /// then reused, descriptor number. No lock: both the eventfd write and an `epoll_ctl` of a ready socket wake
    /// the loop, which on a shared core preempts the writer at once; a lock held across them would make the loop
    /// spin and sleep on it (two context switches more per wake-up).
    private let selectorUsers = Atomic<UInt64>(0)
    private static let selectorClosedBit: UInt64 = 1 << 63
    /// How the loop's thread is scheduled.
    let scheduling: EventLoopThreadScheduling
    /// Reads and writes under way on this loop's descriptors, from their start until they return, whether parked
    /// or not (what an ``EventLoopThreadScheduling/adaptive`` loop decides its policy from; other loops do not
    /// count, so their operations pay no shared atomic).
    private let operations = Atomic<Int>(0)
    private let threadID = Atomic<UInt>(0)

    init(index: Int, scheduling: EventLoopThreadScheduling) throws(SystemCallError) {
        self.index = index
        self.scheduling = scheduling
        self.selector = try PlatformSelector()
    }

    // MARK: - Running work

    /// True when called on this loop's thread.
    package var inEventLoop: Bool {
        let current = threadID.load(ordering: .relaxed)
        return current != 0 && current == UInt(Syscall.currentThread())
    }

    /// Runs `work` on the loop thread soon. Work submitted after shut-down is dropped.
    package func execute(_ work: @escaping @Sendable () -> Void) {
        let wake = state.withLock { state -> Bool in
            guard case .running = state.lifecycle else { return false }
            state.work.append(.closure(work))
            return Self.claimWakeup(&state)
        }
        if wake { wakeUp() }
    }

    /// Runs `work` on the loop thread and returns its result.
    ///
    /// - Throws: ``EventLoopError/shutDown`` if the loop no longer runs work, or what `work` throws.
    package func submit<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<T, any Error>) in
            let accepted = state.withLock { state -> (accepted: Bool, wake: Bool) in
                guard case .running = state.lifecycle else { return (false, false) }
                state.work.append(.closure { continuation.resume(with: Result { try work() }) })
                return (true, Self.claimWakeup(&state))
            }
            if !accepted.accepted { continuation.resume(throwing: EventLoopError.shutDown) }
            if accepted.wake { wakeUp() }
        }
    }

    /// Runs `work` on the loop thread at `deadline` (or soon after).
    ///
    /// - Returns: an id for ``cancelTimer(_:)``.
    @discardableResult
    package func scheduleTimer(at deadline: Deadline, _ work: @escaping @Sendable () -> Void) -> TimerID {
        let (id, wake) = state.withLock { state -> (UInt64, Bool) in
            guard case .running = state.lifecycle else { return (0, false) }
            let id = state.timers.schedule(at: deadline, work)
            if deadline < state.sleepDeadline {
                return (id, Self.claimWakeup(&state))
            }
            return (id, false)
        }
        if wake { wakeUp() }
        return TimerID(rawValue: id)
    }

    /// Runs `work` on the loop thread after `delay`.
    @discardableResult
    package func scheduleTimer(in delay: Duration, _ work: @escaping @Sendable () -> Void) -> TimerID {
        scheduleTimer(at: .now() + delay, work)
    }

    /// Cancels a timer that has not fired yet; the closure is released at once.
    ///
    /// - Returns: false when the timer already fired (or is firing) or was cancelled before.
    @discardableResult
    package func cancelTimer(_ id: TimerID) -> Bool {
        state.withLock { $0.timers.cancel(id.rawValue) }
    }

    /// Decides, under the lock, whether the caller must write to the eventfd.
    private static func claimWakeup(_ state: inout State) -> Bool {
        guard state.sleeping, !state.wakeupPending else { return false }
        state.wakeupPending = true
        return true
    }

    private func wakeUp() {
        withOpenSelector {
            do {
                try selector.wakeup()
            } catch {
                preconditionFailure("cannot wake event loop \(index): \(error)")
            }
        }
    }

    /// Runs `body` with the selector's descriptors open, or returns nil without running it when the loop has
    /// closed them (see ``selectorUsers``).
    @discardableResult
    private func withOpenSelector<R>(_ body: () throws -> R) rethrows -> R? {
        let before = selectorUsers.wrappingAdd(1, ordering: .sequentiallyConsistent).oldValue
        defer { selectorUsers.wrappingSubtract(1, ordering: .sequentiallyConsistent) }
        guard before & Self.selectorClosedBit == 0 else { return nil }
        return try body()
    }

    /// Closes the selector once no other thread uses it (loop thread, at the very end).
    private func closeSelector() {
        selectorUsers.bitwiseOr(Self.selectorClosedBit, ordering: .sequentiallyConsistent)
        // The uses that started before the bit saw the selector open: let them end (each is one system call).
        while selectorUsers.load(ordering: .sequentiallyConsistent) & ~Self.selectorClosedBit != 0 {
            Syscall.yieldThread()
        }
        selector.close()
    }

    /// Enqueues a task job (the `TaskExecutor` entry point); after shut-down jobs go to the global executor
    /// so no task is ever stranded.
    private func enqueueJob(_ job: UnownedJob) {
        let (accepted, wake) = state.withLock { state -> (Bool, Bool) in
            guard case .running = state.lifecycle else {
                if case .shuttingDown = state.lifecycle {
                    state.work.append(.job(job))
                    return (true, false)
                }
                return (false, false)
            }
            state.work.append(.job(job))
            return (true, Self.claimWakeup(&state))
        }
        if wake { wakeUp() }
        if !accepted { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
    }

    // MARK: - Registrations

    /// Registers `fd` for edge-triggered readiness events delivered to `handler` on this loop's thread.
    ///
    /// The registration enters the loop's table first and reaches epoll second, so an event that epoll reports at
    /// once (a connecting socket is often writable by then) always finds its handler. The `epoll_ctl` runs outside
    /// the loop's state lock: it wakes the loop, which on a shared core preempts the caller; under the lock, the
    /// loop would then spin and sleep on it, costing two extra context switches per registration. It runs as a
    /// use of the open selector instead (``selectorUsers``), so it never races with the loop closing its epoll
    /// descriptor at shut-down (which would fail with EBADF, or hit a reused descriptor number).
    ///
    /// - Returns: the registration id, needed to deregister.
    func register(fd: Int32, interest: SelectorInterest, handler: any SelectableHandler) throws -> UInt32 {
        let id = try state.withLock { state throws -> UInt32 in
            guard case .running = state.lifecycle else { throw EventLoopError.shutDown }
            let id = state.nextRegistrationID
            state.nextRegistrationID = id == UInt32.max ? 1 : id + 1
            state.registrations[fd] = Registration(id: id, handler: handler, confirmed: false)
            return id
        }
        let pause = pauseBeforeRegistering.load(ordering: .relaxed)
        if pause > 0 { Syscall.sleep(nanoseconds: pause) }
        do {
            let registered = try withOpenSelector { () throws -> Bool in
                try selector.register(fd: fd, id: id, interest: interest)
                return true
            }
            if registered == nil { throw EventLoopError.shutDown }
            // A loop that shut down meanwhile dropped the registration without telling its handler.
            try state.withLock { state throws in
                guard state.registrations[fd]?.id == id else { throw EventLoopError.shutDown }
                state.registrations[fd]?.confirmed = true
            }
        } catch {
            state.withLock { state in
                if state.registrations[fd]?.id == id { state.registrations[fd] = nil }
            }
            throw error
        }
        return id
    }

    /// Stops delivering events for registration `id` of `fd`. Call before closing the descriptor.
    func deregister(fd: Int32, id: UInt32) {
        let registered = state.withLock { state -> Bool in
            guard state.registrations[fd]?.id == id else { return false }
            state.registrations[fd] = nil
            return true
        }
        guard registered else { return }
        // Outside the state lock, as in `register`; an event epoll reports meanwhile finds no registration and
        // is dropped. The caller closes `fd` only after this returns, so its number cannot be reused before.
        withOpenSelector {
            do {
                try selector.deregister(fd: fd)
            } catch {
                // ENOENT/EPERM cannot happen for a descriptor we registered; nothing else is actionable here.
            }
        }
    }

    // MARK: - The loop

    /// A read or write on one of this loop's descriptors started (``IOChannel/perform``).
    func operationStarted() {
        if scheduling == .adaptive { operations.add(1, ordering: .relaxed) }
    }

    /// A read or write ended: done, failed, timed out or cancelled.
    func operationEnded() {
        if scheduling == .adaptive { operations.subtract(1, ordering: .relaxed) }
    }

    /// Reads and writes under way on this loop now (always 0 on a loop that is not adaptive).
    var operationsUnderWay: Int { operations.load(ordering: .relaxed) }

    func start(name: String) throws(SystemCallError) -> pthread_t {
        try Syscall.startThread(name: name) { [self] in
            threadID.store(UInt(Syscall.currentThread()), ordering: .relaxed)
            // Best effort: a kernel or sandbox that refuses the policy (EPERM) leaves the thread as it was.
            if scheduling == .batch { try? Syscall.setBatchScheduling() }
            run(adaptive: scheduling == .adaptive ? AdaptiveScheduling() : nil)
            // The thread's id may be handed to a later thread once this one is joined: that one is not the loop.
            threadID.store(0, ordering: .relaxed)
        }
    }

    private func run(adaptive: AdaptiveScheduling?) {
        var adaptive = adaptive
        var work: [Runnable] = []
        work.reserveCapacity(64)
        var expired: [Work] = []
        var events: [SelectorEvent] = []
        events.reserveCapacity(64)
        var ready: [(handler: any SelectableHandler, events: SelectorEvents)] = []
        ready.reserveCapacity(64)
        while true {
            // Decide how long to sleep, or stop.
            let decision = state.withLock { state -> (stop: Bool, timeout: Duration?) in
                if case .shuttingDown = state.lifecycle, state.work.isEmpty {
                    // From here on, jobs go to the global executor and closures are refused.
                    state.lifecycle = .shutDown
                    return (true, nil)
                }
                if !state.work.isEmpty {
                    state.sleeping = false
                    return (false, .zero)
                }
                let deadline = state.timers.earliestDeadline()
                state.sleeping = true
                state.sleepDeadline = deadline ?? .distantFuture
                return (false, deadline.map { $0 - .now() })
            }
            if decision.stop { break }

            do {
                try selector.wait(timeout: decision.timeout) { events.append($0) }
            } catch {
                preconditionFailure("event loop \(index): \(error)")
            }
            // Awake: decide the policy for the work this wake-up brought (the count moves while the loop sleeps).
            if adaptive != nil, let change = adaptive?.observe(operations: operations.load(ordering: .relaxed)) {
                // Best effort, as at the start: a refused change leaves the thread as it was.
                switch change {
                case .toBatch: try? Syscall.setBatchScheduling()
                case .toNormal: try? Syscall.setNormalScheduling()
                }
            }
            // One lock for the whole batch: find each event's current registration (events of an earlier
            // registration of the same descriptor number are dropped).
            state.withLock { state in
                // Awake now: work that handlers submit (resumed task jobs) needs no eventfd write.
                state.sleeping = false
                for event in events {
                    guard let registration = state.registrations[event.fd], registration.id == event.registrationID
                    else { continue }
                    ready.append((registration.handler, event.events))
                }
            }
            events.removeAll(keepingCapacity: true)
            for (handler, readyEvents) in ready { handler.selectorReady(readyEvents) }
            ready.removeAll(keepingCapacity: true)

            // Timers, then submitted work.
            let now = Deadline.now()
            state.withLock { state in
                state.sleeping = false
                state.wakeupPending = false
                state.sleepDeadline = .distantFuture
                state.timers.popExpired(now: now, into: &expired)
                swap(&work, &state.work)
            }
            for action in expired { action() }
            expired.removeAll(keepingCapacity: true)
            for item in work {
                switch item {
                case .closure(let action): action()
                case .job(let job): job.runSynchronously(on: asUnownedTaskExecutor())
                }
            }
            work.removeAll(keepingCapacity: true)
        }

        // Shut down: tell whoever is still registered, then drop the timers. A registration still being made is
        // dropped here, unconfirmed: its `register` finds it gone and fails, and its caller closes the descriptor.
        let leftovers = state.withLock { state -> [any SelectableHandler] in
            state.registrations = state.registrations.filter(\.value.confirmed)
            let handlers = state.registrations.values.map(\.handler)
            state.timers.removeAll()
            return handlers
        }
        for handler in leftovers { handler.eventLoopDidShutDown() }
        state.withLock { state in
            state.lifecycle = .shutDown
            state.registrations.removeAll()
            state.work.removeAll()
        }
        let pause = pauseBeforeClosingSelector.load(ordering: .relaxed)
        if pause > 0 { Syscall.sleep(nanoseconds: pause) }
        closeSelector()
    }

    /// Asks the loop to finish the work already submitted and stop.
    func initiateShutdown() {
        let wake = state.withLock { state -> Bool in
            guard case .running = state.lifecycle else { return false }
            state.lifecycle = .shuttingDown
            state.wakeupPending = true
            return true
        }
        let pause = pauseBeforeShutdownWakeUp.load(ordering: .relaxed)
        if pause > 0 { Syscall.sleep(nanoseconds: pause) }
        if wake { wakeUp() }
    }

    /// Test seam: how long ``initiateShutdown()`` waits between deciding its wake-up and writing it, in
    /// nanoseconds (0, the default, for none). Widens the window in which an awake loop stops and closes its
    /// eventfd, so a test shows the wake-up never reaches a closed descriptor.
    let pauseBeforeShutdownWakeUp = Atomic<Int>(0)

    /// Test seams, in nanoseconds (0, the default, for none): how long ``register(fd:interest:handler:)`` waits
    /// between entering the loop's table and its `epoll_ctl`, and how long a stopping loop waits between telling
    /// the registered handlers and closing its selector. Together they make certain a shut-down that lands while
    /// a registration is being made, from another thread, while the selector is still open.
    let pauseBeforeRegistering = Atomic<Int>(0)
    let pauseBeforeClosingSelector = Atomic<Int>(0)

    package var description: String { "EventLoop(\(index))" }
}

/// An event loop is a task executor: inside `withTaskExecutorPreference(loop) { ... }` a task's code runs on
/// the loop thread, so when the loop resumes a parked read the task continues right there, without waking a
/// second thread. Code run this way must not block (no long computations, no blocking calls): it holds up
/// every connection on the loop.
extension EventLoop: TaskExecutor {
    package func enqueue(_ job: consuming ExecutorJob) {
        enqueueJob(UnownedJob(job))
    }
}
