internal import CourierCore
internal import CourierPosix
internal import CourierTLS
internal import Synchronization

/// One connection to Redis: the socket (or TLS over it), a reader task that parses replies, a writer that drains
/// the outbox, and a timer for deadlines, all performing what ``RedisPipelineStateMachine`` decides.
///
/// It reports its own failure once, through `onFailure` (the server closed it, a deadline passed, garbage
/// arrived), so that the client can reconnect; ``close()`` by the owner reports nothing.
final class RedisConnection: Sendable {
    private typealias Waiter = CheckedContinuation<Result<RESPValue, RedisError>, Never>

    private struct State: ~Copyable {
        var machine: RedisPipelineStateMachine
        var waiters: [RedisPipelineStateMachine.CommandID: Waiter] = [:]
        /// Callers whose cancellation ran before their command was queued.
        var cancelledEarly: Set<RedisPipelineStateMachine.CommandID> = []
        var nextID: RedisPipelineStateMachine.CommandID = 0
        var timer: TimerID?
        /// Why the connection ended; nil while it is open.
        var ending: RedisError?
    }

    let generation: UInt64
    let backend: String
    private let stream: any RedisStream
    private let loop: EventLoop
    private let state: Mutex<State>
    private let onFailure: @Sendable (RedisError) -> Void

    private init(stream: any RedisStream, loop: EventLoop, generation: UInt64, backend: String, onFailure: @escaping @Sendable (RedisError) -> Void) {
        self.stream = stream
        self.loop = loop
        self.generation = generation
        self.backend = backend
        self.onFailure = onFailure
        self.state = Mutex(State(machine: RedisPipelineStateMachine(backend: backend)))
    }

    /// Connects to the configuration's server, runs TLS for `rediss://`, then `AUTH` (when a password is set),
    /// `SELECT` (for a database other than 0) and `PING`, all by `deadline`. `tls` is the context for `rediss://`.
    static func open(
        _ configuration: RedisConfiguration, tls: TLSContext?, generation: UInt64, loop: EventLoop, deadline: Deadline,
        onFailure: @escaping @Sendable (RedisError) -> Void
    ) async throws(RedisError) -> RedisConnection {
        let url = configuration.url
        let backend = url.endpoint
        let stream: any RedisStream
        do {
            let addresses: [SocketAddress]
            if let literal = SocketAddress(ipAddress: url.host, port: url.port) {
                addresses = [literal]
            } else {
                addresses = try await Resolver.shared.resolve(host: url.host, port: url.port)
            }
            let tcp = try await TCPConnection.connect(to: addresses, deadline: deadline, on: loop)
            if let tls {
                let engine: TLSEngine
                do {
                    engine = try TLSEngine(context: tls, serverName: url.host, port: url.port)
                } catch {
                    tcp.close()
                    throw error
                }
                stream = try await RedisTLSStream.establish(over: tcp, engine: engine, deadline: deadline)
            } else {
                stream = tcp
            }
        } catch {
            throw RedisError.classify(error, during: "connecting", backend: backend)
        }
        let connection = RedisConnection(stream: stream, loop: loop, generation: generation, backend: backend, onFailure: onFailure)
        connection.startReading(limits: configuration.parserLimits)
        do throws(RedisError) {
            if let password = url.password {
                let credentials = (url.username.map { [$0] } ?? []) + [password]
                _ = try await connection.send(RedisCommand("AUTH", arguments: credentials.map { Array($0.utf8) }), deadline: deadline)
            }
            if url.database != 0 {
                _ = try await connection.send(RedisCommand("SELECT", String(url.database)), deadline: deadline)
            }
            let pong = try await connection.send(RedisCommand("PING"), deadline: deadline)
            guard pong == .simpleString("PONG") else {
                throw RedisError(.protocolViolation, "PING was answered with \(pong)", backend: backend)
            }
        } catch {
            connection.close()
            throw error
        }
        return connection
    }

    /// Sends `command` and waits for its reply, by `deadline`. An error reply throws
    /// ``RedisError/Kind-swift.enum/server`` (or `authentication`); the connection stays usable.
    func send(_ command: RedisCommand, deadline: Deadline) async throws(RedisError) -> RESPValue {
        let id = state.withLock { state -> RedisPipelineStateMachine.CommandID in
            state.nextID += 1
            return state.nextID
        }
        let bytes = command.encoded
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: Waiter) in
                enqueue(id, bytes: bytes, deadline: deadline, continuation: continuation)
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard state.waiters[id] != nil else {
                    state.cancelledEarly.insert(id)
                    return nil
                }
                guard state.machine.abandon(id) else { return nil }
                return state.waiters.removeValue(forKey: id)
            }
            waiter?.resume(returning: .failure(RedisError(.cancelled, "\(command.name) was cancelled while waiting for its reply", backend: backend)))
        }
        let value = try result.get()
        if let message = value.errorMessage {
            throw RedisError.reply(message, to: command.name, backend: backend)
        }
        return value
    }

    private func enqueue(_ id: RedisPipelineStateMachine.CommandID, bytes: [UInt8], deadline: Deadline, continuation: Waiter) {
        let action = state.withLock { state -> RedisPipelineStateMachine.SendAction? in
            if state.cancelledEarly.remove(id) != nil { return nil }
            let action = state.machine.send(id, bytes: bytes, deadline: deadline, now: .now())
            if case .queued(_, let arm) = action {
                state.waiters[id] = continuation
                if let arm { armTimer(at: arm, &state) }
            }
            return action
        }
        switch action {
        case nil:
            continuation.resume(returning: .failure(RedisError(.cancelled, "the command was cancelled before it was sent", backend: backend)))
        case .fail(let error)?:
            continuation.resume(returning: .failure(error))
        case .queued(let startWriter, _)?:
            if startWriter { writeOutbox() }
        }
    }

    /// Writes the outbox from the caller's thread while the socket takes it whole (the usual case: a command is a
    /// few dozen bytes); what it does not take goes to a writer task that waits for the socket. Either way this is
    /// the connection's one writer until the outbox is empty (the machine hands the outbox to one writer at a
    /// time), so commands reach the wire in the order they were queued.
    private func writeOutbox() {
        while let bytes = state.withLock({ $0.machine.takeOutbox() }) {
            let sent = stream.writeNow(bytes)
            guard sent < bytes.count else { continue }
            let rest = sent == 0 ? bytes : Array(bytes[sent...])
            Task { await self.drainOutbox(first: rest) }
            return
        }
    }

    /// Writes `first`, then the outbox until it is empty, waiting for the socket as needed.
    private func drainOutbox(first: [UInt8]) async {
        var next: [UInt8]? = first
        while let bytes = next {
            do {
                try await stream.write(bytes, deadline: nil)
            } catch {
                fail(RedisError.classify(error, during: "writing to the connection", backend: backend))
                return
            }
            next = state.withLock { $0.machine.takeOutbox() }
        }
    }

    /// The connection's reader: parses replies where bytes arrive (the event loop's thread) and hands each to the
    /// oldest waiting command, resuming its caller from there.
    private func startReading(limits: RESPParser.Limits) {
        let parser = Mutex(RESPParser(limits: limits))
        stream.receiveContinuously { [self] received in
            do {
                let bytes = try received.get()
                guard !bytes.isEmpty else {
                    throw RedisError(.unavailable, "the server closed the connection", backend: backend)
                }
                let replies = try parser.withLock { parser throws(RESPParseError) -> [RESPValue] in
                    parser.feed(bytes)
                    var replies: [RESPValue] = []
                    while let reply = try parser.next() { replies.append(reply) }
                    return replies
                }
                for reply in replies { deliver(reply) }
                return true
            } catch {
                fail(RedisError.classify(error, during: "reading a reply", backend: backend))
                return false
            }
        }
    }

    private func deliver(_ reply: RESPValue) {
        let (action, waiter) = state.withLock { state -> (RedisPipelineStateMachine.ReplyAction, Waiter?) in
            let action = state.machine.replyReceived(reply)
            if case .deliver(let id, _) = action { return (action, state.waiters.removeValue(forKey: id)) }
            return (action, nil)
        }
        switch action {
        case .deliver(_, let value): waiter?.resume(returning: .success(value))
        case .drop: break
        case .close(let reason, let failures): end(failures, reporting: reason)
        }
    }

    /// Arms the loop timer for `deadline`, replacing an armed one (the machine asks only for an earlier one).
    private func armTimer(at deadline: Deadline, _ state: inout State) {
        if let armed = state.timer { loop.cancelTimer(armed) }
        state.timer = loop.scheduleTimer(at: deadline) { [weak self] in self?.timerFired() }
    }

    private func timerFired() {
        let action = state.withLock { state -> RedisPipelineStateMachine.TimerAction in
            state.timer = nil
            let action = state.machine.timerFired(now: .now())
            if case .arm(let deadline) = action { armTimer(at: deadline, &state) }
            return action
        }
        if case .close(let reason, let failures) = action {
            end(failures, reporting: reason)
        }
    }

    /// The connection failed (reader, writer): every waiting caller fails with `error`, and the client hears of it.
    private func fail(_ error: RedisError) {
        let failures = state.withLock { $0.machine.close(error) }
        end(failures, reporting: error)
    }

    /// Why the connection ended (failed or closed); nil while it is open. The client checks it under its own
    /// lock before it hands the connection to a call or takes a new one into use, so that a failure whose report
    /// has not reached it yet (or reached it too early, during the hand-over) is acted on all the same.
    var ending: RedisError? { state.withLock { $0.ending } }

    /// Closes the connection (the owner's decision: shut-down, a newer connection); waiting callers fail.
    func close() {
        let failures = state.withLock { $0.machine.close(RedisError(.unavailable, "the connection was closed", backend: backend)) }
        end(failures, reporting: nil)
    }

    /// Closes the stream, resumes the failed callers, and tells the client once (unless the owner closed it).
    private func end(_ failures: [RedisPipelineStateMachine.Failure], reporting error: RedisError?) {
        let (waiters, firstEnd) = state.withLock { state -> ([(Waiter, RedisError)], Bool) in
            let firstEnd = state.ending == nil
            if firstEnd { state.ending = error ?? RedisError(.unavailable, "the connection was closed", backend: backend) }
            if let timer = state.timer { loop.cancelTimer(timer) }
            state.timer = nil
            let waiters = failures.flatMap { failure in failure.ids.compactMap { state.waiters.removeValue(forKey: $0) }.map { ($0, failure.error) } }
            return (waiters, firstEnd)
        }
        stream.close()
        // The client first, so that a caller resumed below finds it already reconnecting.
        if firstEnd, let error { onFailure(error) }
        for (waiter, error) in waiters { waiter.resume(returning: .failure(error)) }
    }
}
