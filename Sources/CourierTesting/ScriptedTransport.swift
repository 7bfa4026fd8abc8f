public import CourierCore
internal import Synchronization

/// A protocol plugin that answers every `http` and `https` request (and those of any extra scheme it is given)
/// from a script, with no network: the data loader's policy, rate limits, retries, authorisers, cache and
/// resumed downloads run over it as over a server, and its delays sleep on the clock it is given, so that with a
/// ``ManualClock`` a 30 s back-off takes no real time.
///
/// ```swift
/// let clock = ManualClock()
/// let transport = ScriptedTransport(clock: .manual(clock))
/// try transport.enqueue(.serviceUnavailable(retryAfter: 30))
/// try transport.enqueue(.json(#"{"ok":true}"#))
/// var configuration = DataLoaderService.Configuration(userAgent: "tests")
/// transport.install(in: &configuration)      // its protocols and its clock
/// // ... load through a service made with `configuration`, advance `clock` ...
/// #expect(transport.requests.map(\.path) == ["/items", "/items"])
/// ```
///
/// **Answers** as a ``MockServer`` answers, from the same kind of script: the last route installed that matches
/// (``on(_:_:host:_:)``: method, path or `*`, and the host when the route names one), else the oldest queued
/// response (``enqueue(_:)``), else `404` with a body saying no script answered, noted in ``problems``. A host can
/// be made unreachable (``refuseConnections(to:)``): its requests fail as a refused connection would, and a policy's
/// fallback address for it (``ProtocolRequest/connectTo``) is answered by the script, unless it is refused too.
///
/// **Requests** are recorded in ``requests`` as they arrive, with the `Host` field the wire would have carried,
/// ``MockRequest/receivedAt`` read from the transport's clock, ``MockRequest/connectionID`` 0 (there is no
/// connection) and ``MockRequest/indexOnConnection`` the request's place among all of the transport's requests.
///
/// **On the wire**: a whole body is given a `Content-Length` unless the script wrote one; the waits of
/// ``MockResponse/delayed(by:)``, ``MockResponse/chunked(_:status:headers:delayBetweenChunks:)`` and
/// ``MockResponse/throttled(bytesPerSecond:)`` sleep on the clock, counted from the request's arrival (a manual
/// clock counts each one among its ``ManualClock/sleepers`` while it lasts); ``MockResponse/disconnecting(afterBodyBytes:)``
/// ends the body with a `protocol` ``CourierError`` after that many bytes, which a policy retries as
/// `connection-lost` (and resumes, when the response allows it: ``MockResponse/ranged(of:for:etag:headers:)``).
/// ``MockResponse/closingConnection()`` changes nothing.
public final class ScriptedTransport: ProtocolPlugin, Sendable {
    /// `http`, `https` and the extra schemes it was given.
    public let schemes: [String]
    /// The clock its delays sleep on and its requests' arrival times are read from.
    public let clock: LoaderClock
    /// The largest request body it reads; a larger one is answered with `413` and noted in ``problems``.
    public let maxRequestBodyBytes: Int

    private let script: MockScript
    private let refused = Mutex<Set<String>>([])

    /// - Parameters:
    ///   - clock: what its delays sleep on (give the service the same one: ``install(in:)`` does).
    ///   - extraSchemes: schemes it answers besides http and https, lower case (`["api"]`).
    ///   - maxScriptDelay: the most a response's waits may add up to (a response over it is refused by
    ///     ``enqueue(_:)``; from a route it is answered with `500`).
    public init(
        clock: LoaderClock = .system, extraSchemes: [String] = [], maxScriptDelay: Duration = .seconds(3600),
        maxRequestBodyBytes: Int = 16 << 20
    ) {
        self.schemes = ["http", "https"] + extraSchemes.map { $0.lowercased() }.filter { $0 != "http" && $0 != "https" }
        self.clock = clock
        self.maxRequestBodyBytes = maxRequestBodyBytes
        self.script = MockScript(name: "ScriptedTransport", maxDelay: maxScriptDelay)
    }

    // MARK: - Scripting

    /// Queues a response for the next request no route answers.
    /// - Throws: ``MockServerError`` (`invalidScript`) for a response that cannot be sent (a status outside
    ///   200...599, an invalid header field, a rate below 1, a negative count or delay, waits over the cap).
    public func enqueue(_ response: MockResponse) throws(MockServerError) {
        try script.enqueue(response)
    }

    /// Answers every `method` request for `path` (without the query; `*` for any path), on `host` (any host when
    /// nil), with `handler`'s response; a later matching route wins. A response that cannot be sent is answered
    /// with `500` and noted in ``problems``.
    public func on(
        _ method: HTTPMethod, _ path: String, host: String? = nil, _ handler: @escaping @Sendable (MockRequest) -> MockResponse
    ) {
        script.on(MockRoute(method: method, path: path, host: host, handler: handler))
    }

    /// Answers like ``on(_:_:host:_:)``, but only requests that carry `Authorization: Bearer <token>`; the others
    /// get ``MockResponse/unauthorized(challenge:)``. The token appears in no response and no problem.
    public func on(
        _ method: HTTPMethod, _ path: String, host: String? = nil, requiringBearerToken token: String,
        _ handler: @escaping @Sendable (MockRequest) -> MockResponse
    ) {
        on(method, path, host: host, MockScript.requiring(bearerToken: token, handler))
    }

    /// Makes every request to `host` fail as a refused connection does (a `connect` ``CourierError``, which a
    /// policy retries as `connect-error` and a fallback target answers), until ``acceptConnections(to:)``. Such a
    /// request reaches no script and is not recorded.
    public func refuseConnections(to host: String) {
        _ = refused.withLock { $0.insert(host.lowercased()) }
    }

    /// Undoes ``refuseConnections(to:)``.
    public func acceptConnections(to host: String) {
        _ = refused.withLock { $0.remove(host.lowercased()) }
    }

    /// Responses queued and not yet used.
    public var pendingResponses: Int { script.pendingResponses }

    // MARK: - What happened

    /// Every request answered, in arrival order.
    public var requests: [MockRequest] { script.requests }

    /// Returns once `count` requests in all have been answered (``requests`` then holds at least that many); throws
    /// ``MockServerError/Kind/timedOut`` if they have not after `timeout` of real time. For a test whose loads run
    /// in the background: `await transport.waitForRequests(3)` instead of a loop that polls ``requests``.
    public func waitForRequests(_ count: Int, timeout: Duration = .seconds(10)) async throws(MockServerError) {
        try await script.waitForRequests(count, timeout: timeout)
    }

    /// What went wrong, in order: requests no script answered, responses that could not be sent, bodies too large.
    public var problems: [String] { script.problems }

    // MARK: - ProtocolPlugin

    public func respond(to request: ProtocolRequest) async throws -> ProtocolResponse {
        let url = request.url
        let (host, port) = (request.connectTo?.host ?? url.host, request.connectTo?.port ?? url.port)
        if refused.withLock({ $0.contains(host.lowercased()) }) {
            throw CourierError(.connect, "ScriptedTransport: the connection to \(host):\(port) was refused (scripted)")
        }
        let arrival = clock.now()
        var headers = request.headers
        if !headers.contains("host") { headers.add(name: "Host", value: url.hostHeader) }
        let body: [UInt8]
        do {
            body = try await request.body.collect(upTo: maxRequestBodyBytes)
        } catch {
            script.note("\(request.method) \(url.path): the request body is larger than \(maxRequestBodyBytes) bytes")
            return ProtocolResponse(status: 413, reason: MockWirePlan.reason(413))
        }
        let recorded = MockRequest(
            method: request.method, target: url.requestTarget, headers: headers, body: body, receivedAt: arrival.instant
        )
        let response = script.answer(recorded, numbered: true)
        let reader = ScriptedBodyReader(MockBodyPlan(response), clock: clock, from: arrival)
        try await reader.wait(response.delayBeforeHead)
        var fields = response.headers
        if case .whole = response.body, !fields.contains("content-length"), !fields.contains("transfer-encoding") {
            fields.add(name: "Content-Length", value: String(response.bodyBytes.count))
        }
        return ProtocolResponse(
            status: response.status, reason: MockWirePlan.reason(response.status), headers: fields,
            body: request.method == .head ? .empty : ProtocolBody(next: { try await reader.next() })
        )
    }
}
