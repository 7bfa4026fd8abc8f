import CCourierOpenSSL
import CourierTLS

/// A TLS server made of OpenSSL and two memory BIOs, no socket (CourierTLS's server engine): the peer a
/// ``TLSEngine`` is driven against in these tests, byte by byte, with the test moving the ciphertext between the two.
final class InMemoryTLSServer {
    /// A server's settings (an `SSL_CTX`): servers made from one context share their session-ticket keys, so a
    /// client can resume with the second what it got from the first.
    final class Context {
        let context: TLSServerContext

        init(chain: String, key: String, tickets: Int = 2, maxVersion: Int32 = TLS1_3_VERSION) throws {
            guard let pointer = SSL_CTX_new(TLS_server_method()) else { throw ServerError.setup("SSL_CTX_new") }
            context = TLSServerContext(adopting: pointer)
            guard SSL_CTX_use_certificate_chain_file(pointer, chain) == 1,
                SSL_CTX_use_PrivateKey_file(pointer, key, SSL_FILETYPE_PEM) == 1
            else { throw ServerError.setup("the certificate or key") }
            _ = ccourier_SSL_CTX_set_max_proto_version(pointer, maxVersion)
            _ = SSL_CTX_set_num_tickets(pointer, tickets)
        }
    }

    private let engine: TLSServerEngine

    /// A server presenting the context's chain with its key.
    init(context: Context) throws {
        engine = try TLSServerEngine(context: context.context)
    }

    /// A server with a context of its own.
    convenience init(chain: String, key: String, tickets: Int = 2) throws {
        try self.init(context: Context(chain: chain, key: key, tickets: tickets))
    }

    func feed(_ bytes: [UInt8]) { engine.feed(bytes) }

    func takeOutput() -> [UInt8] { engine.takeOutput() }

    /// Advances the server's handshake; true once it is complete.
    @discardableResult
    func handshake() -> Bool { engine.handshake() == .complete }

    func write(_ text: String) {
        _ = engine.write(Array(text.utf8))
    }

    /// Plaintext the client sent, as far as it has arrived.
    func read() -> String {
        var out: [UInt8] = []
        while case .bytes = engine.read(maxBytes: 4096, into: &out) {}
        return String(decoding: out, as: UTF8.self)
    }

    /// Queues `close_notify`.
    func closeNotify() { engine.shutdown() }

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
