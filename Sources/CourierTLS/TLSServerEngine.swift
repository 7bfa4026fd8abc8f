internal import CCourierOpenSSL
internal import CourierCore

/// One server TLS session over memory BIOs, the server-side twin of ``TLSEngine``: ciphertext in, ciphertext out,
/// plaintext in between, no I/O and no clock. Its owner moves bytes between it and the socket.
///
/// Not thread-safe: the owner serialises every call.
package final class TLSServerEngine: @unchecked Sendable {
    private let ssl: OpaquePointer
    private let input: OpaquePointer
    private let output: OpaquePointer
    private var established = false

    package init(context: TLSServerContext) throws(TLSError) {
        OpenSSLErrorQueue.clear()
        guard let ssl = SSL_new(context.pointer), let input = BIO_new(BIO_s_mem()), let output = BIO_new(BIO_s_mem()) else {
            throw TLSError(.handshakeFailed, openSSLErrors: OpenSSLErrorQueue.drain().texts)
        }
        _ = ccourier_BIO_set_mem_eof_return(input, -1)
        SSL_set_bio(ssl, input, output)
        SSL_set_accept_state(ssl)
        self.ssl = ssl
        self.input = input
        self.output = output
    }

    deinit {
        SSL_free(ssl)
    }

    /// Ciphertext from the client.
    package func feed(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        _ = bytes.withUnsafeBytes { BIO_write(input, $0.baseAddress, Int32($0.count)) }
    }

    /// The client closed the connection.
    package func feedEndOfInput() {
        _ = ccourier_BIO_set_mem_eof_return(input, 0)
    }

    /// Ciphertext to send (empty when there is none).
    package func takeOutput() -> [UInt8] {
        let count = ccourier_BIO_pending(output)
        guard count > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = Int(max(0, BIO_read(output, buffer.baseAddress, Int32(count))))
        }
    }

    /// Advances the handshake with what was fed so far (send ``takeOutput()`` after every step).
    package func handshake() -> TLSEngine.HandshakeStep {
        OpenSSLErrorQueue.clear()
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            established = true
            return .complete
        }
        let error = SSL_get_error(ssl, result)
        if error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE { return .wantInput }
        return .failed(TLSError(.handshakeFailed, openSSLErrors: OpenSSLErrorQueue.drain().texts))
    }

    /// Reads up to `maxBytes` of plaintext: `.bytes(n)` with the bytes appended to `into`.
    package func read(maxBytes: Int, into bytes: inout [UInt8]) -> TLSEngine.ReadStep {
        precondition(established, "read before the handshake completed")
        OpenSSLErrorQueue.clear()
        var count = 0
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: maxBytes))
        let result = bytes.withUnsafeMutableBytes { SSL_read_ex(ssl, $0.baseAddress! + start, maxBytes, &count) }
        bytes.removeLast(maxBytes - (result == 1 ? count : 0))
        if result == 1 { return .bytes(count) }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return .wantInput
        case SSL_ERROR_ZERO_RETURN: return .closed
        default: return .failed(TLSError(.sessionFailed, openSSLErrors: OpenSSLErrorQueue.drain().texts))
        }
    }

    /// Encrypts all of `bytes` into the output; nil on success.
    package func write(_ bytes: [UInt8]) -> TLSError? {
        precondition(established, "write before the handshake completed")
        return bytes.withUnsafeBytes { TLSEngine.write($0, to: ssl) }
    }

    /// Queues `close_notify` (send ``takeOutput()`` afterwards, best effort).
    package func shutdown() {
        guard established else { return }
        TLSEngine.shutdown(ssl)
    }
}
