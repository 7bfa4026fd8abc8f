import CCourierOpenSSL
import CourierTLS

/// A TLS server made of OpenSSL and two memory BIOs, no socket: the peer a ``TLSEngine`` is driven against in
/// these tests, byte by byte, with the test moving the ciphertext between the two.
final class InMemoryTLSServer {
    /// A server's settings (an `SSL_CTX`): servers made from one context share their session-ticket keys, so a
    /// client can resume with the second what it got from the first.
    final class Context {
        let pointer: OpaquePointer

        init(chain: String, key: String, tickets: Int = 2, maxVersion: Int32 = TLS1_3_VERSION) throws {
            guard let context = SSL_CTX_new(TLS_server_method()) else { throw ServerError.setup("SSL_CTX_new") }
            pointer = context
            guard SSL_CTX_use_certificate_chain_file(context, chain) == 1,
                SSL_CTX_use_PrivateKey_file(context, key, SSL_FILETYPE_PEM) == 1
            else { throw ServerError.setup("the certificate or key") }
            _ = ccourier_SSL_CTX_set_max_proto_version(context, maxVersion)
            _ = SSL_CTX_set_num_tickets(context, tickets)
        }

        deinit { SSL_CTX_free(pointer) }
    }

    private let context: Context
    private let ssl: OpaquePointer
    private let input: OpaquePointer
    private let output: OpaquePointer

    /// A server presenting `chain` (PEM, leaf first) with `key`; `tickets` TLS 1.3 session tickets after the
    /// handshake.
    init(context: Context) throws {
        self.context = context
        guard let ssl = SSL_new(context.pointer), let input = BIO_new(BIO_s_mem()), let output = BIO_new(BIO_s_mem()) else {
            throw ServerError.setup("SSL_new")
        }
        _ = ccourier_BIO_set_mem_eof_return(input, -1)
        SSL_set_bio(ssl, input, output)
        SSL_set_accept_state(ssl)
        self.ssl = ssl
        self.input = input
        self.output = output
    }

    /// A server with a context of its own.
    convenience init(chain: String, key: String, tickets: Int = 2) throws {
        try self.init(context: Context(chain: chain, key: key, tickets: tickets))
    }

    deinit {
        SSL_free(ssl)
    }

    func feed(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        _ = bytes.withUnsafeBytes { BIO_write(input, $0.baseAddress, Int32($0.count)) }
    }

    func takeOutput() -> [UInt8] {
        let count = ccourier_BIO_pending(output)
        guard count > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = Int(max(0, BIO_read(output, buffer.baseAddress, Int32(count))))
        }
    }

    /// Advances the server's handshake; true once it is complete.
    @discardableResult
    func handshake() -> Bool { SSL_do_handshake(ssl) == 1 }

    func write(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { SSL_write(ssl, $0.baseAddress, Int32($0.count)) }
    }

    /// Plaintext the client sent, as far as it has arrived.
    func read() -> String {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = SSL_read(ssl, &buffer, Int32(buffer.count))
            guard n > 0 else { break }
            out += buffer[0..<Int(n)]
        }
        ERR_clear_error()
        return String(decoding: out, as: UTF8.self)
    }

    /// Queues `close_notify`.
    func closeNotify() { _ = SSL_shutdown(ssl) }

    enum ServerError: Error {
        case setup(String)
    }
}

/// Moves ciphertext between a client engine and the in-memory server until neither has anything to say, driving
/// both handshakes; returns the client's last handshake step.
@discardableResult
func pump(_ client: TLSEngine, _ server: InMemoryTLSServer, rounds: Int = 10) -> TLSEngine.HandshakeStep {
    var step = client.handshake()
    for _ in 0..<rounds {
        server.feed(client.takeOutput())
        server.handshake()
        let toClient = server.takeOutput()
        if toClient.isEmpty, case .wantInput = step { break }
        client.feed(toClient)
        step = client.handshake()
        if case .failed = step { break }
        if case .complete = step, !client.hasOutput { break }
    }
    server.feed(client.takeOutput())
    server.handshake()
    return step
}
