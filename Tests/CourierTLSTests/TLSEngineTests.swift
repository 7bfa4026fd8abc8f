import CCourierOpenSSL
import CourierCore
import CourierTestSupport
import CourierTLS
import Testing

/// The engine without a socket: a client ``TLSEngine`` and an in-memory OpenSSL server, the test carrying every
/// byte between them. What the socket tests cannot show precisely (where a truncation is seen, what happens to
/// tickets that arrive after the handshake, what a plain-text answer does) is driven here step by step.
@Suite struct TLSEngineTests {
    static let pki = TestPKI.shared
    static let trusted = TLSPolicy(caFile: pki.rootCA)

    func server(_ chain: String = "good", tickets: Int = 2) throws -> InMemoryTLSServer {
        try InMemoryTLSServer(chain: Self.pki.chain(chain), key: Self.pki.key(chain), tickets: tickets)
    }

    /// Reads whatever plaintext the engine can give without more input.
    func readAll(_ client: TLSEngine) -> (String, TLSEngine.ReadStep) {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let step = buffer.withUnsafeMutableBytes { client.read(into: $0) }
            guard case .bytes(let n) = step else { return (String(decoding: out, as: UTF8.self), step) }
            out += buffer[0..<n]
        }
    }

    @Test func aHandshakeAndDataBothWaysWithoutASocket() throws {
        let context = try TLSContext(policy: Self.trusted)
        let client = try TLSEngine(context: context, serverName: "localhost", port: 443)
        let server = try server()
        #expect(pump(client, server) == .complete)
        let info = try #require(client.info)
        #expect(info.version == "TLSv1.3")
        #expect(!info.resumed)
        #expect(info.peerCertificate?.pin == Self.pki.pins["good"])

        let request = Array("GET / HTTP/1.1\r\n\r\n".utf8)
        #expect(request.withUnsafeBytes { client.write($0) } == nil)
        server.feed(client.takeOutput())
        #expect(server.read() == "GET / HTTP/1.1\r\n\r\n")
        server.write("HTTP/1.1 200 OK\r\n\r\n")
        client.feed(server.takeOutput())
        let (text, step) = readAll(client)
        #expect(text == "HTTP/1.1 200 OK\r\n\r\n")
        #expect(step == .wantInput)
    }

    /// The session's facts are read from the certificate only when asked for, so the info keeps its own
    /// reference to it: asked after the engine (and its `SSL`, which owned the certificate) is gone, it still
    /// reads the leaf, and twice the same.
    @Test func theCertificateIsReadWhenAskedForEvenAfterTheEngineIsGone() throws {
        let context = try TLSContext(policy: Self.trusted)
        var client: TLSEngine? = try TLSEngine(context: context, serverName: "localhost", port: 443)
        var server: InMemoryTLSServer? = try server()
        #expect(pump(client!, server!) == .complete)
        let info = try #require(client!.info)
        client = nil
        server = nil
        let leaf = try #require(info.peerCertificate)
        #expect(leaf.pin == Self.pki.pins["good"])
        #expect(leaf.names.contains("localhost"))
        #expect(info.peerCertificate == leaf)
        // A copy given a summary of its own compares by value.
        var copy = info
        copy.peerCertificate = leaf
        #expect(copy == info && copy.hashValue == info.hashValue)
        copy.peerCertificate = nil
        #expect(copy != info)
    }

    @Test func ticketsAfterTheHandshakeAreAbsorbedAndLetTheNextSessionResume() throws {
        let context = try TLSContext(policy: Self.trusted)
        let servers = try InMemoryTLSServer.Context(chain: Self.pki.chain("good"), key: Self.pki.key("good"), tickets: 1)
        let first = try TLSEngine(context: context, serverName: "localhost", port: 8443)
        #expect(pump(first, try InMemoryTLSServer(context: servers)) == .complete)
        // The server's ticket came after its Finished and nothing has read it: it waits in the engine, and a read
        // consumes it and yields no plaintext.
        #expect(first.hasBufferedInput)
        #expect(readAll(first).1 == .wantInput)
        #expect(!first.hasBufferedInput)

        let second = try TLSEngine(context: context, serverName: "localhost", port: 8443)
        #expect(pump(second, try InMemoryTLSServer(context: servers)) == .complete)
        #expect(second.info?.resumed == true)
        // Another origin (port) has no session to resume.
        let other = try TLSEngine(context: context, serverName: "localhost", port: 9443)
        #expect(pump(other, try InMemoryTLSServer(context: servers)) == .complete)
        #expect(other.info?.resumed == false)
    }

    @Test func withoutReadingTheTicketNothingIsResumed() throws {
        let context = try TLSContext(policy: Self.trusted)
        let servers = try InMemoryTLSServer.Context(chain: Self.pki.chain("good"), key: Self.pki.key("good"), tickets: 1)
        let first = try TLSEngine(context: context, serverName: "localhost", port: 8443)
        #expect(pump(first, try InMemoryTLSServer(context: servers)) == .complete)
        let second = try TLSEngine(context: context, serverName: "localhost", port: 8443)
        #expect(pump(second, try InMemoryTLSServer(context: servers)) == .complete)
        #expect(second.info?.resumed == false)
    }

    @Test func anEndOfInputWithoutCloseNotifyIsATruncationAndWithItAnEnd() throws {
        let context = try TLSContext(policy: Self.trusted)
        let cut = try TLSEngine(context: context, serverName: "localhost", port: 443)
        let server = try server()
        #expect(pump(cut, server) == .complete)
        server.write("partial body")
        cut.feed(server.takeOutput())
        cut.feedEndOfInput()
        let (text, step) = readAll(cut)
        #expect(text == "partial body")
        guard case .failed(let error) = step else {
            Issue.record("expected a truncation, got \(step)")
            return
        }
        #expect(error.reason == .truncated)
        #expect(error.category == .session)

        let clean = try TLSEngine(context: context, serverName: "localhost", port: 443)
        let cleanServer = try self.server()
        #expect(pump(clean, cleanServer) == .complete)
        cleanServer.write("whole body")
        cleanServer.closeNotify()
        clean.feed(cleanServer.takeOutput())
        clean.feedEndOfInput()
        let (cleanText, cleanStep) = readAll(clean)
        #expect(cleanText == "whole body")
        #expect(cleanStep == .closed)
    }

    @Test func aPlainTextAnswerIsNotTLS() throws {
        let client = try TLSEngine(context: try TLSContext(policy: Self.trusted), serverName: "localhost", port: 443)
        _ = client.handshake()
        #expect(!client.takeOutput().isEmpty)  // the ClientHello
        client.feed(Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".utf8))
        guard case .failed(let error) = client.handshake() else {
            Issue.record("the handshake did not fail")
            return
        }
        #expect(error.reason == .notTLS)
        #expect(!error.openSSLErrors.isEmpty)
    }

    @Test func theNameIsVerifiedAndTheErrorListsTheCertificatesNames() throws {
        let client = try TLSEngine(context: try TLSContext(policy: Self.trusted), serverName: "api.example.com", port: 443)
        guard case .failed(let error) = pump(client, try server()) else {
            Issue.record("the handshake did not fail")
            return
        }
        #expect(error.reason == .hostnameMismatch(host: "api.example.com", names: ["localhost", "127.0.0.1", "0:0:0:0:0:0:0:1"]))
    }

    @Test func pinsAreCheckedAfterVerificationAgainstTheWholeChain() throws {
        var pinned = Self.trusted
        pinned.pins = [try #require(TLSPolicy.Pin(Self.pki.pins["backup"]!))]
        let client = try TLSEngine(context: try TLSContext(policy: pinned), serverName: "localhost", port: 443)
        guard case .failed(let error) = pump(client, try server()) else {
            Issue.record("the handshake did not fail")
            return
        }
        guard case .pinMismatch(let offered, let expected) = error.reason else {
            Issue.record("not a pin mismatch: \(error)")
            return
        }
        #expect(expected == [Self.pki.pins["backup"]!])
        // Leaf, intermediate and root: the verified chain, not only what the server sent.
        #expect(offered == [Self.pki.pins["good"]!, Self.pki.pins["intermediate"]!, Self.pki.pins["root"]!])
        #expect(client.info == nil)
    }

    @Test func aFailedHandshakeForgetsTheOriginsSessions() throws {
        let context = try TLSContext(policy: Self.trusted)
        let servers = try InMemoryTLSServer.Context(chain: Self.pki.chain("good"), key: Self.pki.key("good"), tickets: 2)
        let first = try TLSEngine(context: context, serverName: "localhost", port: 443)
        #expect(pump(first, try InMemoryTLSServer(context: servers)) == .complete)
        _ = readAll(first)  // two tickets: one for the next connection, one to spare
        // The next connection to the origin offers the session to a server that cannot take it (another
        // server's ticket keys) and does not trust: the full handshake fails, and the origin's sessions go.
        let second = try TLSEngine(context: context, serverName: "localhost", port: 443)
        guard case .failed = pump(second, try server("untrusted")) else {
            Issue.record("the untrusted server's handshake did not fail")
            return
        }
        let third = try TLSEngine(context: context, serverName: "localhost", port: 443)
        #expect(pump(third, try InMemoryTLSServer(context: servers)) == .complete)
        #expect(third.info?.resumed == false, "the session was forgotten after the failure")
    }
}
