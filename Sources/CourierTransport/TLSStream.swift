internal import CourierCore
internal import CourierPosix
internal import CourierTLS
internal import Synchronization

/// A TLS session over a ``TCPConnection`` (or over another TLS session: TLS to the origin inside TLS to an
/// `https://` proxy, ``TLSTransport``): a ``TLSEngine`` (OpenSSL over memory BIOs) whose ciphertext this stream
/// moves to and from the socket. The socket's own reads and writes do the waiting (non-blocking, parked on
/// the event loop, with their timeouts and cancellation), so the TLS layer adds no thread and no second timer.
///
/// Like ``TCPConnection``, one read and one write may run at once; any error closes the stream. Should a read
/// produce ciphertext of its own (a TLS 1.3 key update) while a write is sending, the writer sends it after its
/// own bytes.
final class TLSStream<Transport: TLSTransport>: ByteStream, TLSTransport, Sendable {
    private struct State: ~Copyable {
        let engine: TLSEngine
        /// A task is writing ciphertext to the socket; whoever holds this sends whatever output is left before
        /// giving it up.
        var sending = false
        var closed = false
    }

    private let tcp: Transport
    private let state: Mutex<State>
    let tlsInfo: TLSSessionInfo?
    /// The TCP peer under the session (under every layer of TLS).
    var peerAddress: String? { tcp.peerAddress }
    /// Counts this stream while it exists (its engine, and so its OpenSSL session, lives exactly as long).
    private let tracker: LiveCount?
    /// Where ciphertext lands from the socket before it is fed to the engine: one buffer for the stream's life
    /// (the handshake's flights included), not an array per read. Only the reading task touches it (one read at
    /// a time).
    nonisolated(unsafe) private let ciphertext: UnsafeMutableRawBufferPointer

    private static var ciphertextBytes: Int { 32 * 1024 }

    /// Takes ownership of `ciphertext` (``ciphertextBytes`` long).
    private init(
        tcp: Transport, engine: sending TLSEngine, info: TLSSessionInfo?, tracker: LiveCount?,
        ciphertext: UnsafeMutableRawBufferPointer
    ) {
        self.tcp = tcp
        self.state = Mutex(State(engine: engine))
        self.tlsInfo = info
        self.tracker = tracker
        self.ciphertext = ciphertext
        tracker?.add(1)
    }

    deinit {
        ciphertext.deallocate()
        tracker?.add(-1)
    }

    /// Runs the handshake over `tcp`, finishing by `deadline`, and returns the established stream. On failure
    /// `tcp` is closed.
    ///
    /// The client's last flight (its `Finished`, in TLS 1.3 and in a resumed TLS 1.2 handshake) is not sent here:
    /// it stays in the engine, and the stream's first write sends it with the request, in one `send` and one
    /// segment where there were two (and the server answers the request together with its session tickets). A
    /// read, a close, or the pool's probe of a connection that went idle unused sends it first too.
    ///
    /// - Throws: ``TLSError`` for a handshake, certificate or pin failure; ``ConnectionError`` (a timeout, a
    ///   closed socket) or `CancellationError` from the socket.
    nonisolated(nonsending) static func handshake(
        over tcp: Transport, engine: sending TLSEngine, deadline: Deadline, tracker: LiveCount? = nil
    ) async throws -> TLSStream {
        var engine = Optional(engine)
        // The stream's read buffer, used for the server's flights already.
        let ciphertext = UnsafeMutableRawBufferPointer.allocate(byteCount: ciphertextBytes, alignment: 16)
        do {
            while true {
                let step = engine!.handshake()
                if step != .complete {  // the last flight waits for the first write (see above)
                    let output = engine!.takeOutput()
                    if !output.isEmpty { try await tcp.write(output, deadline: deadline, idle: nil) }
                }
                switch step {
                case .complete:
                    let info = engine!.info
                    return TLSStream(tcp: tcp, engine: engine.take()!, info: info, tracker: tracker, ciphertext: ciphertext)
                case .failed(let error):
                    throw error
                case .wantInput:
                    let count = try await tcp.read(into: ciphertext, deadline: deadline, idle: nil)
                    if count == 0 {
                        engine!.feedEndOfInput()
                    } else {
                        engine!.feed(UnsafeRawBufferPointer(rebasing: ciphertext[0..<count]))
                    }
                }
            }
        } catch {
            ciphertext.deallocate()
            tcp.close()
            throw error
        }
    }

    // MARK: - ByteStream

    nonisolated(nonsending) func read(maxBytes: Int, deadline: Deadline?, idle: Duration?) async throws -> [UInt8] {
        precondition(maxBytes > 0, "maxBytes must be positive")
        while true {
            var step = TLSEngine.ReadStep.wantInput
            // At most one record (16 KiB) comes out per read: decrypt on the stack, return exactly what came.
            let bytes = try withEngine { engine -> [UInt8] in
                withUnsafeTemporaryAllocation(byteCount: min(maxBytes, 16 * 1024), alignment: 1) { buffer in
                    step = engine.read(into: buffer)
                    if case .bytes(let count) = step { return Array(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) }
                    return []
                }
            }
            if try await settle(step, deadline: deadline, idle: idle) { return bytes }
        }
    }

    nonisolated(nonsending) func read(into bytes: inout [UInt8], at offset: Int, deadline: Deadline?, idle: Duration?) async throws -> Int {
        precondition(offset >= 0 && offset < bytes.count, "the offset must leave room in the array")
        while true {
            var step = TLSEngine.ReadStep.wantInput
            try withEngine { engine in
                bytes.withUnsafeMutableBytes { raw in
                    step = engine.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[offset...]))
                }
            }
            if try await settle(step, deadline: deadline, idle: idle) {
                if case .bytes(let count) = step { return count }
                return 0
            }
        }
    }

    /// Acts on a read step: sends any output it produced, and for `wantInput` feeds the engine from the socket.
    /// Returns whether the read is over (plaintext or a clean end); throws (closing the stream) on a failure.
    nonisolated(nonsending) private func settle(_ step: TLSEngine.ReadStep, deadline: Deadline?, idle: Duration?) async throws -> Bool {
        do {
            try await flush(deadline: deadline, idle: idle)
            switch step {
            case .bytes, .closed:
                return true
            case .failed(let error):
                throw error
            case .wantInput:
                let count = try await tcp.read(into: ciphertext, deadline: deadline, idle: idle)
                let arrived = UnsafeRawBufferPointer(rebasing: ciphertext[0..<count])
                try withEngine { count == 0 ? $0.feedEndOfInput() : $0.feed(arrived) }
                return false
            }
        } catch {
            close()
            throw error
        }
    }

    nonisolated(nonsending) func write(_ bytes: [UInt8], deadline: Deadline?, idle: Duration?) async throws {
        guard !bytes.isEmpty else { return }
        do {
            let failure = try withEngine { engine in bytes.withUnsafeBytes { engine.write($0) } }
            if let failure { throw failure }
            try await flush(deadline: deadline, idle: idle)
        } catch {
            close()
            throw error
        }
    }

    /// Sends the engine's output, unless another task is already sending (it sends this output too).
    nonisolated(nonsending) private func flush(deadline: Deadline?, idle: Duration?) async throws {
        var output = state.withLock { s -> [UInt8] in
            guard !s.sending, s.engine.hasOutput else { return [] }
            s.sending = true
            return s.engine.takeOutput()
        }
        while !output.isEmpty {
            do {
                try await tcp.write(output, deadline: deadline, idle: idle)
            } catch {
                state.withLock { $0.sending = false }
                throw error
            }
            output = state.withLock { s -> [UInt8] in
                let more = s.engine.takeOutput()
                if more.isEmpty { s.sending = false }
                return more
            }
        }
    }

    /// Runs `body` on the engine under the lock; throws ``ConnectionError/closed`` once the stream is closed.
    private func withEngine<R>(_ body: (TLSEngine) throws -> R) throws -> R {
        try state.withLock { s in
            guard !s.closed else { throw ConnectionError.closed }
            return try body(s.engine)
        }
    }

    func isQuietSinceLastRead() -> Bool {
        tcp.isQuietSinceLastRead() && state.withLock { !$0.closed && !$0.engine.hasBufferedInput && !$0.engine.hasOutput }
    }

    func isClosedByPeer() -> Bool { probeIdle() == .closed }

    func hasPendingInput() -> Bool { probeIdle() == .pendingInput }

    private enum Probe { case open, pendingInput, closed }

    /// Looks at an idle session without waiting: whatever the socket holds goes through the engine, so that TLS
    /// messages after the handshake (TLS 1.3 session tickets) are absorbed instead of counting as unsolicited
    /// data. Plaintext means the server sent something unasked (the connection is not reusable); a
    /// `close_notify`, an end of file or an error means it is closed. A handshake's last flight still held (a
    /// connection that went idle before its first write) is sent first: the server sends nothing before it.
    private func probeIdle() -> Probe {
        guard sendHeldOutputNow() else { return .closed }
        do {
            while let input = try tcp.receiveNow(maxBytes: 16 * 1024) {
                try withEngine { input.isEmpty ? $0.feedEndOfInput() : $0.feed(input) }
                if input.isEmpty { break }
            }
            var byte: UInt8 = 0
            let step = try withEngine { engine in withUnsafeMutableBytes(of: &byte) { engine.read(into: $0) } }
            switch step {
            case .wantInput: return .open
            case .bytes: return .pendingInput
            case .closed, .failed: return .closed
            }
        } catch {
            return .closed
        }
    }

    /// Sends what the engine holds for the peer without waiting, unless a write is sending already (it sends this
    /// too). False when the socket did not take it all (nothing this small is refused by an idle socket's buffer):
    /// the stream is then closed, as a partial record cannot be taken back.
    private func sendHeldOutputNow() -> Bool {
        var output = state.withLock { s -> [UInt8] in
            guard !s.sending, !s.closed, s.engine.hasOutput else { return [] }
            s.sending = true
            return s.engine.takeOutput()
        }
        while !output.isEmpty {
            guard tcp.sendNow(output) == output.count else {
                state.withLock { $0.sending = false }
                close()
                return false
            }
            output = state.withLock { s -> [UInt8] in
                let more = s.engine.takeOutput()
                if more.isEmpty { s.sending = false }
                return more
            }
        }
        return true
    }

    // MARK: - TLSTransport (a TLS session carried inside this one)

    nonisolated(nonsending) func read(into buffer: UnsafeMutableRawBufferPointer, deadline: Deadline?, idle: Duration?) async throws -> Int {
        while true {
            var step = TLSEngine.ReadStep.wantInput
            try withEngine { step = $0.read(into: buffer) }
            if try await settle(step, deadline: deadline, idle: idle) {
                if case .bytes(let count) = step { return count }
                return 0
            }
        }
    }

    /// The plaintext available now without waiting: nil when there is none yet, empty at the end of the session.
    func receiveNow(maxBytes: Int) throws -> [UInt8]? {
        while let input = try tcp.receiveNow(maxBytes: 16 * 1024) {
            try withEngine { input.isEmpty ? $0.feedEndOfInput() : $0.feed(input) }
            if input.isEmpty { break }
        }
        var step = TLSEngine.ReadStep.wantInput
        let bytes = try withEngine { engine -> [UInt8] in
            withUnsafeTemporaryAllocation(byteCount: min(max(maxBytes, 1), 16 * 1024), alignment: 1) { buffer in
                step = engine.read(into: buffer)
                if case .bytes(let count) = step { return Array(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) }
                return []
            }
        }
        switch step {
        case .bytes: return bytes
        case .wantInput: return nil
        case .closed: return []
        case .failed(let error): throw error
        }
    }

    /// Encrypts `bytes` and sends the records without waiting; all of `bytes` or 0 (the session is then closed).
    func sendNow(_ bytes: [UInt8]) -> Int {
        let failed: Bool
        do {
            failed = try withEngine { engine in bytes.withUnsafeBytes { engine.write($0) } } != nil
        } catch {
            failed = true
        }
        guard !failed else {
            close()
            return 0
        }
        return sendHeldOutputNow() ? bytes.count : 0
    }

    func close(sendingLast bytes: [UInt8]) {
        if !bytes.isEmpty { _ = sendNow(bytes) }
        close()
    }

    func close() {
        let goodbye = state.withLock { s -> [UInt8] in
            guard !s.closed else { return [] }
            s.closed = true
            s.engine.shutdown()
            return s.engine.takeOutput()
        }
        tcp.close(sendingLast: goodbye)
    }
}
