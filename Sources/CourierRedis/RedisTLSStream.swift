internal import CourierCore
internal import CourierPosix
internal import CourierTLS
internal import Synchronization

/// A TLS session (CourierTLS's ``TLSEngine`` over memory BIOs) over a TCP socket, for `rediss://`.
///
/// Narrower than CourierTransport's `TLSStream` (which serves HTTP's pool: idle probes, reads into caller
/// buffers, writes from any task), because a Redis connection has exactly one reader and one writer: the engine
/// is locked only while it is called, never across a socket wait. TLS records that reading produces for the
/// peer (a TLS 1.3 key-update answer) go out with the writer's next write; Redis waits for none of them.
final class RedisTLSStream: RedisStream {
    private let tcp: TCPConnection
    private let engine: Mutex<TLSEngine?>

    private init(tcp: TCPConnection, engine: sending TLSEngine) {
        self.tcp = tcp
        self.engine = Mutex(engine)
    }

    /// Runs the handshake over `tcp` by `deadline`. On failure `tcp` is closed.
    nonisolated(nonsending) static func establish(over tcp: TCPConnection, engine: sending TLSEngine, deadline: Deadline) async throws -> RedisTLSStream {
        let stream = RedisTLSStream(tcp: tcp, engine: engine)
        do {
            var finished = false
            while !finished {
                let (step, output) = try stream.withEngine { engine in (engine.handshake(), engine.takeOutput()) }
                if !output.isEmpty { try await tcp.write(output, deadline: deadline) }
                switch step {
                case .complete: finished = true
                case .failed(let error): throw error
                case .wantInput: try await stream.receive(deadline: deadline)
                }
            }
            return stream
        } catch {
            stream.close()
            throw error
        }
    }

    /// Decrypts on the loop's thread as records arrive, and hands each run of plaintext to `handler`.
    func receiveContinuously(_ handler: @escaping @Sendable (Result<[UInt8], any Error>) -> Bool) {
        tcp.receiveContinuously(maxBytes: 16 * 1024) { [self] received in
            do {
                let input = try received.get()
                try withEngine { input.isEmpty ? $0.feedEndOfInput() : $0.feed(input) }
                while true {
                    let (bytes, step) = try withEngine { engine in
                        withUnsafeTemporaryAllocation(byteCount: 16 * 1024, alignment: 1) { buffer -> ([UInt8], TLSEngine.ReadStep) in
                            let step = engine.read(into: buffer)
                            if case .bytes(let count) = step { return (Array(UnsafeRawBufferPointer(rebasing: buffer[0..<count])), step) }
                            return ([], step)
                        }
                    }
                    switch step {
                    case .bytes:
                        guard handler(.success(bytes)) else { return false }
                    case .closed:
                        _ = handler(.success([]))
                        return false
                    case .failed(let error):
                        throw error
                    case .wantInput:
                        guard input.isEmpty else { return true }
                        // The socket ended inside a record: the stream ends here.
                        _ = handler(.success([]))
                        return false
                    }
                }
            } catch {
                _ = handler(.failure(error))
                return false
            }
        }
    }

    nonisolated(nonsending) func write(_ bytes: [UInt8], deadline: Deadline?) async throws {
        let output = try withEngine { engine -> [UInt8] in
            if let failure = bytes.withUnsafeBytes({ engine.write($0) }) { throw failure }
            return engine.takeOutput()
        }
        try await tcp.write(output, deadline: deadline, idle: nil)
    }

    /// Moves what the socket has (waiting for it) into the engine.
    nonisolated(nonsending) private func receive(deadline: Deadline?) async throws {
        let input = try await tcp.read(maxBytes: 16 * 1024, deadline: deadline)
        try withEngine { input.isEmpty ? $0.feedEndOfInput() : $0.feed(input) }
    }

    private func withEngine<R>(_ body: (TLSEngine) throws -> R) throws -> R {
        try engine.withLock { engine in
            guard let engine else { throw ConnectionError.closed }
            return try body(engine)
        }
    }

    /// Always 0: a TLS record goes through the engine and may need the socket to wait; ``write(_:deadline:)``
    /// sends it all.
    func writeNow(_ bytes: [UInt8]) -> Int { 0 }

    func close() {
        let goodbye = engine.withLock { engine -> [UInt8] in
            guard let open = engine else { return [] }
            engine = nil
            open.shutdown()
            return open.takeOutput()
        }
        tcp.close(sendingLast: goodbye)
    }
}
