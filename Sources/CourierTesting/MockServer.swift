public import CourierCore
internal import CourierHTTP1
internal import CourierPosix
internal import CourierTLS
internal import Glibc
internal import Synchronization

/// A real HTTP/1.1 server on 127.0.0.1 (a port the kernel picks), over TLS when asked, for testing code that
/// talks HTTP: a test scripts the answers and reads back the requests.
///
/// ```swift
/// try await withMockServer { server in
///     try server.enqueue(.serviceUnavailable(retryAfter: 1))
///     server.on(.get, "/items") { request in .json(#"["a"]"#) }
///     // ... point the code under test at server.url("/items") ...
///     #expect(server.requests.map(\.path) == ["/items", "/items"])
/// }
/// ```
///
/// **Answers.** A request is answered by the last route installed for its method and path (``on(_:_:_:)``;
/// the path `*` matches any), else by the oldest response ``enqueue(_:)`` left (first in, first out), else with
/// `404` and a body saying no script answered, noted in ``problems``. Every request is recorded in ``requests``
/// whatever answered it.
///
/// **Connections.** Kept alive as HTTP/1.1 says: requests follow one another on a connection until the client
/// closes it, sends `Connection: close`, a response closes it (``MockResponse/closingConnection()``, a cut body)
/// or it sits idle for ``Configuration/idleTimeout``. Requests are read with Courier's own parser, `CourierHTTP1`'s
/// ``RequestParser``: a malformed or hostile request is answered with its status (400, 413, 431, 501, 505), and
/// the connection closed.
///
/// **Bounded.** Every read and write has ``Configuration/ioTimeout``; a response's waits together are capped at
/// ``Configuration/maxScriptDelay``; ``shutdown()`` closes the listener and every connection, stops every
/// response in progress, and returns once every handler has ended. ``withMockServer(tls:configuration:_:)``
/// shuts down however its body ends; a server made with `init` must be shut down by its owner.
public final class MockServer: Sendable {
    /// The server's bounds.
    public struct Configuration: Sendable {
        /// The longest wait for the next bytes of a request, or for the client to take a response's bytes.
        public var ioTimeout: Duration = .seconds(5)
        /// How long a kept-alive connection may wait for its next request.
        public var idleTimeout: Duration = .seconds(10)
        /// The most a response's waits (before the head, between chunks, for throttling) may add up to.
        public var maxScriptDelay: Duration = .seconds(30)
        /// The largest request body the server reads; a larger one is answered with 413.
        public var maxRequestBodyBytes = 16 << 20

        public init() {}
    }

    /// The port on 127.0.0.1.
    public let port: Int
    /// Whether the server speaks TLS.
    public let isTLS: Bool
    public let configuration: Configuration

    private let listener: TCPListener
    private let tls: MockTLS?
    private let script: MockScript
    private let state = Mutex(MockServerState())
    private let serving = Mutex<Task<Void, Never>?>(nil)

    /// Binds 127.0.0.1 on a free port and starts serving.
    ///
    /// - Parameter tls: serve HTTPS with a certificate authority and a certificate made now (see
    ///   ``certificateAuthorityPath``).
    /// - Throws: ``MockServerError`` (`cannotListen`, `tlsSetup`).
    public init(tls: Bool = false, configuration: Configuration = Configuration()) throws(MockServerError) {
        let setup: MockTLS?
        if tls { setup = try MockTLS.make() } else { setup = nil }
        do {
            listener = try TCPListener.bind(host: "127.0.0.1", port: 0, on: EventLoopGroup.shared.next())
        } catch {
            setup?.removeFiles()
            throw MockServerError(.cannotListen, "cannot listen on 127.0.0.1: \(error)")
        }
        self.port = listener.localAddress.port
        self.isTLS = tls
        self.configuration = configuration
        self.script = MockScript(name: "MockServer", maxDelay: configuration.maxScriptDelay)
        self.tls = setup
        serving.withLock { $0 = Task { await self.serve() } }
    }

    // MARK: - Where it is

    /// `http://127.0.0.1:<port>` or `https://...`.
    public var baseURL: String { "\(isTLS ? "https" : "http")://127.0.0.1:\(port)" }

    /// The URL of `pathAndQuery` (starting with `/`) on this server; `host` may be `localhost` (the server
    /// listens on 127.0.0.1 only, which the certificate names too).
    /// - Throws: ``MockServerError`` (`invalidPath`) when the two do not make a URL.
    public func url(_ pathAndQuery: String = "/", host: String = "127.0.0.1") throws(MockServerError) -> HTTPURL {
        let text = "\(isTLS ? "https" : "http")://\(host):\(port)\(pathAndQuery)"
        guard pathAndQuery.hasPrefix("/"), let url = HTTPURL(text) else {
            throw MockServerError(.invalidPath, "'\(pathAndQuery.prefix(80))' does not make a URL on \(baseURL)")
        }
        return url
    }

    /// The certificate authority's certificate in PEM, for a TLS server (nil without TLS).
    public var certificateAuthorityPEM: String? {
        tls.map { String(decoding: $0.certificates.authorityPEM, as: UTF8.self) }
    }

    /// A file holding ``certificateAuthorityPEM``, for a policy's `tls: { ca-file: ... }` (removed by ``shutdown()``).
    public var certificateAuthorityPath: String? { tls?.authorityPath }

    /// TLS settings that trust this server's certificate authority only, for an `HTTPClient` request.
    public var trustingPolicy: TLSPolicy? { tls.map { TLSPolicy(caFile: $0.authorityPath) } }

    // MARK: - Scripting

    /// Queues a response for the next request no route answers.
    /// - Throws: ``MockServerError`` (`invalidScript`) for a response the server cannot send.
    public func enqueue(_ response: MockResponse) throws(MockServerError) {
        try script.enqueue(response)
    }

    /// Answers every `method` request for `path` (without the query; `*` for any path) with `handler`'s response,
    /// which is checked as ``enqueue(_:)`` checks (a response the server cannot send is answered with 500 and noted
    /// in ``problems``). A later route for the same method and path replaces this one.
    public func on(_ method: HTTPMethod, _ path: String, _ handler: @escaping @Sendable (MockRequest) -> MockResponse) {
        script.on(MockRoute(method: method, path: path, handler: handler))
    }

    /// Answers like ``on(_:_:_:)``, but only requests that carry `Authorization: Bearer <token>`; others get
    /// ``MockResponse/unauthorized(challenge:)``. The token appears in no response and no problem.
    public func on(
        _ method: HTTPMethod, _ path: String, requiringBearerToken token: String,
        _ handler: @escaping @Sendable (MockRequest) -> MockResponse
    ) {
        on(method, path, MockScript.requiring(bearerToken: token, handler))
    }

    /// Responses queued and not yet sent.
    public var pendingResponses: Int { script.pendingResponses }

    // MARK: - What happened

    /// Every request received, in arrival order.
    public var requests: [MockRequest] { script.requests }

    /// Returns once `count` requests in all have been received (``requests`` then holds at least that many); throws
    /// ``MockServerError/Kind/timedOut`` if they have not after `timeout` of real time. For a test whose loads run
    /// in the background: `await transport.waitForRequests(3)` instead of a loop that polls ``requests``.
    public func waitForRequests(_ count: Int, timeout: Duration = .seconds(10)) async throws(MockServerError) {
        try await script.waitForRequests(count, timeout: timeout)
    }

    /// Connections accepted so far.
    public var acceptedConnections: Int { state.withLock { $0.nextConnectionID - 1 } }

    /// What went wrong on the server's side, in order: requests it refused as malformed, requests no script
    /// answered, responses it could not send.
    public var problems: [String] { script.problems }

    // MARK: - Ending

    /// Stops listening, closes every connection (a response in progress stops where it is), waits until every
    /// handler has ended and removes the CA file. Calling it again does nothing.
    public func shutdown() async {
        let connections = state.withLock { state -> [TCPConnection] in
            state.stopped = true
            defer { state.open = [:] }
            return Array(state.open.values)
        }
        listener.close()
        for connection in connections { connection.close() }
        let task = serving.withLock { task -> Task<Void, Never>? in
            defer { task = nil }
            return task
        }
        task?.cancel()
        await task?.value
        tls?.removeFiles()
    }

    // MARK: - Serving

    private func serve() async {
        await withDiscardingTaskGroup { handlers in
            while true {
                let connection: TCPConnection
                do {
                    connection = try await listener.accept()
                } catch {
                    return  // closed by shutdown(), or the listener failed (and is closed)
                }
                let id = state.withLock { state -> Int? in
                    guard !state.stopped else { return nil }
                    defer { state.nextConnectionID += 1 }
                    state.open[state.nextConnectionID] = connection
                    return state.nextConnectionID
                }
                guard let id else {
                    connection.close()
                    return
                }
                handlers.addTask {
                    await self.handle(connection, id: id)
                    _ = self.state.withLock { $0.open.removeValue(forKey: id) }
                }
            }
        }
    }

    /// Serves the requests of one connection until it closes; closes it.
    private func handle(_ connection: TCPConnection, id: Int) async {
        let io: any MockConnectionIO
        do {
            if let tls {
                io = try await TLSMockConnection(connection, context: tls.context, timeout: configuration.ioTimeout)
            } else {
                io = PlainMockConnection(connection)
            }
        } catch {
            connection.close()
            return
        }
        defer { io.close() }
        var exchange = MockExchange(connectionID: id, limits: RequestParser.Limits(maxBodyBytes: configuration.maxRequestBodyBytes))
        do {
            while true {
                switch exchange.next() {
                case .needBytes(let idle):
                    let bytes = try await io.read(timeout: idle ? configuration.idleTimeout : configuration.ioTimeout)
                    exchange.received(bytes, at: .now)
                case .answer(let request, let keepAlive):
                    let response = script.answer(request)
                    let plan = MockWirePlan(response, headOnly: request.method == .head, keepAlive: keepAlive)
                    try await carryOut(plan, on: io)
                    if plan.closes { return }
                case .refuse(let error):
                    script.note("connection \(id): refused a request: \(error)")
                    let refusal = MockResponse(status: error.status, headers: ["Content-Type": "text/plain"], body: "\(error)\n")
                    try await carryOut(MockWirePlan(refusal, headOnly: false, keepAlive: false), on: io)
                    return
                case .done:
                    return
                }
            }
        } catch {
            // A read or write failed or timed out, or shutdown() cancelled the wait: the connection closes.
        }
    }

    /// Sends the plan's bytes and waits out its waits, each wait counted from the response's start.
    private func carryOut(_ plan: MockWirePlan, on io: any MockConnectionIO) async throws {
        var due = ContinuousClock.now
        for step in plan.steps {
            switch step {
            case .send(let bytes):
                try await io.write(bytes, timeout: configuration.ioTimeout)
            case .wait(let duration):
                due += duration
                try await Task.sleep(until: due, clock: .continuous)
            }
        }
    }
}

/// What the server's lock guards.
struct MockServerState: Sendable {
    var open: [Int: TCPConnection] = [:]
    var nextConnectionID = 1
    var stopped = false
}

/// Serves with ``MockServer`` for the length of `body` and shuts it down however `body` ends.
///
/// - Throws: ``MockServerError`` when the server cannot start, or what `body` throws.
nonisolated(nonsending) public func withMockServer<Result>(
    tls: Bool = false, configuration: MockServer.Configuration = MockServer.Configuration(),
    _ body: (MockServer) async throws -> Result
) async throws -> Result {
    let server = try MockServer(tls: tls, configuration: configuration)
    do {
        let result = try await body(server)
        await server.shutdown()
        return result
    } catch {
        await server.shutdown()
        throw error
    }
}
