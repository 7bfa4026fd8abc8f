internal import CourierPosix
internal import CourierTLS

/// One accepted connection as the server's handler uses it: plaintext in and out, every read and write bounded by
/// a timeout. Used by one task at a time.
protocol MockConnectionIO: AnyObject {
    /// The next plaintext bytes; empty once the client closed its side.
    func read(timeout: Duration) async throws -> [UInt8]
    func write(_ bytes: [UInt8], timeout: Duration) async throws
    func close()
}

/// A plain TCP connection.
final class PlainMockConnection: MockConnectionIO {
    private let connection: TCPConnection

    init(_ connection: TCPConnection) {
        self.connection = connection
    }

    func read(timeout: Duration) async throws -> [UInt8] {
        try await connection.read(maxBytes: 16 * 1024, timeout: timeout)
    }

    func write(_ bytes: [UInt8], timeout: Duration) async throws {
        try await connection.write(bytes, timeout: timeout)
    }

    func close() {
        connection.close()
    }
}

/// A TLS session over a TCP connection, with the server's side of the handshake done first.
final class TLSMockConnection: MockConnectionIO {
    private let connection: TCPConnection
    private let engine: TLSServerEngine

    /// Runs the handshake, bounded by `timeout` as a whole.
    /// - Throws: the handshake's ``TLSError``, or the connection's error.
    init(_ connection: TCPConnection, context: TLSServerContext, timeout: Duration) async throws {
        self.connection = connection
        self.engine = try TLSServerEngine(context: context)
        let deadline = ContinuousClock.now + timeout
        while true {
            let step = engine.handshake()
            try await flush(timeout: timeout)
            switch step {
            case .complete: return
            case .failed(let error): throw error
            case .wantInput:
                let bytes = try await connection.read(maxBytes: 16 * 1024, timeout: max(.zero, deadline - .now))
                if bytes.isEmpty { engine.feedEndOfInput() } else { engine.feed(bytes) }
            }
        }
    }

    func read(timeout: Duration) async throws -> [UInt8] {
        var plaintext: [UInt8] = []
        while true {
            switch engine.read(maxBytes: 16 * 1024, into: &plaintext) {
            case .bytes: return plaintext
            case .closed: return []
            case .failed(let error): throw error
            case .wantInput:
                try await flush(timeout: timeout)
                let bytes = try await connection.read(maxBytes: 16 * 1024, timeout: timeout)
                if bytes.isEmpty { engine.feedEndOfInput() } else { engine.feed(bytes) }
            }
        }
    }

    func write(_ bytes: [UInt8], timeout: Duration) async throws {
        if let error = engine.write(bytes) { throw error }
        try await flush(timeout: timeout)
    }

    func close() {
        engine.shutdown()
        connection.close(sendingLast: engine.takeOutput())
    }

    private func flush(timeout: Duration) async throws {
        let output = engine.takeOutput()
        if !output.isEmpty { try await connection.write(output, timeout: timeout) }
    }
}
