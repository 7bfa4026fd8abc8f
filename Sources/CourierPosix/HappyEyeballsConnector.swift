internal import Glibc
internal import Synchronization
internal import CourierCore

/// Runs a `HappyEyeballsStateMachine` against real sockets: opens the attempts, arms loop timers for the
/// attempt delay and the overall timeout, closes losers, and resumes the connecting task once.
///
/// Every machine event and the actions it returns are handled under one lock, so actions from two threads
/// never interleave (a "cancel attempt 2" can never overtake the "start attempt 2" it refers to). Anything
/// that could call back into the connector (closing a channel resumes its callback; resuming the task) runs
/// after the lock is released.
final class HappyEyeballsConnector: Sendable {
    private struct State {
        var machine: HappyEyeballsStateMachine
        var attempts: [Int: IOChannel] = [:]
        var continuation: UnsafeContinuation<TCPConnection, any Error>?
        var result: Result<TCPConnection, any Error>?
        var timers: [TimerID] = []
    }

    /// What to do once the lock is released.
    private struct Aftermath {
        var close: [IOChannel] = []
        var resume: (UnsafeContinuation<TCPConnection, any Error>, Result<TCPConnection, any Error>)?
        var cancelTimers: [TimerID] = []
    }

    private let loop: EventLoop
    /// When the whole race gives up.
    private let deadline: Deadline
    /// The time the race was given (for the timeout's message).
    private let timeout: Duration
    private let state: Mutex<State>

    init(addresses: [SocketAddress], deadline: Deadline, loop: EventLoop) {
        self.loop = loop
        self.deadline = deadline
        let now = Deadline.now()
        self.timeout = deadline < now ? .zero : deadline - now
        self.state = Mutex(State(machine: HappyEyeballsStateMachine(addresses: addresses)))
    }

    func connect() async throws -> TCPConnection {
        try await CancellationScope.withCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<TCPConnection, any Error>) in
                let earlyResult = state.withLock { state -> Result<TCPConnection, any Error>? in
                    if let result = state.result { return result }
                    state.continuation = continuation
                    return nil
                }
                if let earlyResult {
                    continuation.resume(with: earlyResult)
                    return
                }
                if CancellationScope.isCancelled {
                    handle { $0.machine.cancelled() }
                    return
                }
                let timer = loop.scheduleTimer(at: deadline) { [weak self] in
                    self?.handle { $0.machine.timedOut() }
                }
                let finished = state.withLock { state -> Bool in
                    state.timers.append(timer)
                    return state.machine.isFinished
                }
                if finished { loop.cancelTimer(timer) }
                handle { $0.machine.start(now: .now()) }
            }
        } onCancel: {
            self.handle { $0.machine.cancelled() }
        }
    }

    // MARK: - Driving the machine

    private enum AttemptStart {
        case connected(IOChannel)
        case inProgress(IOChannel)
        case failed(SystemCallError)
    }

    /// Feeds one event to the machine and performs the resulting actions (and the events they cause).
    private func handle(_ event: (inout State) -> [HappyEyeballsStateMachine.Action]) {
        var after = Aftermath()
        state.withLock { state in
            var actions = event(&state)
            var cursor = 0
            while cursor < actions.count {
                let action = actions[cursor]
                cursor += 1
                switch action {
                case .startAttempt(let index, let address):
                    switch startAttempt(index: index, address: address) {
                    case .connected(let channel):
                        state.attempts[index] = channel
                        actions += state.machine.attemptSucceeded(index: index)
                    case .inProgress(let channel):
                        state.attempts[index] = channel
                        if !channel.awaitWritable(since: 0, { [weak self] result in
                            self?.attemptBecameWritable(index: index, result: result)
                        }) {
                            // Readiness already arrived: check the outcome right here.
                            actions += verdict(for: channel, index: index, machine: &state.machine)
                        }
                    case .failed(let error):
                        actions += state.machine.attemptFailed(index: index, error: error, now: .now())
                    }
                case .scheduleNextAttempt(let deadline):
                    let timer = loop.scheduleTimer(at: deadline) { [weak self] in
                        self?.handle { $0.machine.nextAttemptTimerFired(now: .now()) }
                    }
                    state.timers.append(timer)
                case .cancelAttempt(let index):
                    if let channel = state.attempts.removeValue(forKey: index) { after.close.append(channel) }
                case .succeed(let index):
                    let channel = state.attempts.removeValue(forKey: index)!
                    let result = Result<TCPConnection, any Error> {
                        try TCPConnection(channel: channel, remoteAddress: state.machine.addresses[index])
                    }
                    finish(&state, with: result, into: &after)
                case .fail(let failure):
                    finish(&state, with: .failure(error(for: failure)), into: &after)
                }
            }
        }
        for timer in after.cancelTimers { loop.cancelTimer(timer) }
        for channel in after.close { channel.close() }
        if let (continuation, result) = after.resume { continuation.resume(with: result) }
    }

    private func finish(
        _ state: inout State,
        with result: Result<TCPConnection, any Error>,
        into after: inout Aftermath
    ) {
        after.close += state.attempts.values
        state.attempts.removeAll()
        after.cancelTimers = state.timers
        state.timers.removeAll()
        if let continuation = state.continuation {
            state.continuation = nil
            after.resume = (continuation, result)
        } else {
            state.result = result
        }
    }

    private func error(for failure: HappyEyeballsStateMachine.Failure) -> any Error {
        switch failure {
        case .noAddresses: ConnectionError.noAddresses
        case .allAttemptsFailed(let attempts): ConnectionError.connectFailed(attempts)
        case .timedOut(let attempts): ConnectionError.connectTimeout(timeout, attempts: attempts)
        case .cancelled: CancellationError()
        }
    }

    /// Opens a socket and starts connecting. Registration happens after `connect` so the first
    /// writability edge can only be the connect finishing (a fresh, unconnected TCP socket polls as
    /// writable, which would otherwise look like success).
    private func startAttempt(index: Int, address: SocketAddress) -> AttemptStart {
        let descriptor: FileDescriptor
        do {
            descriptor = FileDescriptor(takingOwnershipOf: try Syscall.socket(domain: address.domain, type: Int32(SOCK_STREAM.rawValue)))
        } catch {
            return .failed(error)
        }
        let inProgress: Bool
        do throws(SystemCallError) {
            if case .wouldBlock = try Syscall.connect(descriptor.rawValue, to: address) {
                inProgress = true
            } else {
                inProgress = false
            }
        } catch {
            descriptor.close()
            return .failed(error)
        }
        let channel: IOChannel
        do {
            channel = try IOChannel.register(descriptor, on: loop, interest: .readWrite)
        } catch let error as SystemCallError {
            return .failed(error)
        } catch {
            return .failed(SystemCallError(call: "register", errno: ESHUTDOWN))
        }
        return inProgress ? .inProgress(channel) : .connected(channel)
    }

    /// Called on the loop thread when an in-flight attempt's socket became writable (or was closed).
    private func attemptBecameWritable(index: Int, result: Result<Void, any Error>) {
        guard case .success = result else {
            // Closed by us (cancelled, lost, or the loop shut down): the machine has already moved on, or
            // this is the loop shutting down under a live race.
            handle { $0.machine.attemptFailed(index: index, error: SystemCallError(call: "connect", errno: ECANCELED), now: .now()) }
            return
        }
        handle { state in
            // No channel: the attempt was already cancelled and closed; the machine has moved on.
            guard let channel = state.attempts[index] else { return [] }
            return verdict(for: channel, index: index, machine: &state.machine)
        }
    }

    /// Reads `SO_ERROR` after a writability edge and turns it into the machine's event.
    private func verdict(
        for channel: IOChannel,
        index: Int,
        machine: inout HappyEyeballsStateMachine
    ) -> [HappyEyeballsStateMachine.Action] {
        let outcome = channel.withDescriptor { fd -> Result<Bool, SystemCallError> in
            Result { () throws(SystemCallError) -> Bool in
                let error = try Syscall.getIntOption(fd, level: SOL_SOCKET, name: SO_ERROR)
                if error != 0 { throw SystemCallError(call: "connect", errno: error) }
                do throws(SystemCallError) {
                    _ = try Syscall.remoteAddress(fd)
                    return true
                } catch {
                    if error.errno == ENOTCONN { return false }  // not connected yet: a spurious edge
                    throw error
                }
            }
        }
        switch outcome {
        case .none:
            return machine.attemptFailed(index: index, error: SystemCallError(call: "connect", errno: ECANCELED), now: .now())
        case .success(true)?:
            return machine.attemptSucceeded(index: index)
        case .success(false)?:
            let epoch = channel.currentEpoch(.write)
            if channel.awaitWritable(since: epoch, { [weak self] result in
                self?.attemptBecameWritable(index: index, result: result)
            }) {
                return []
            }
            return verdict(for: channel, index: index, machine: &machine)
        case .failure(let error)?:
            return machine.attemptFailed(index: index, error: error, now: .now())
        }
    }
}
