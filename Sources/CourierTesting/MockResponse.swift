public import CourierCore

/// A scripted answer: status, header fields, body, and how it goes on the wire (a delay before the head, chunks
/// with pauses between them, a rate, a cut after some body bytes). A value with no sockets in it: a
/// ``MockServer`` sends it over a connection, and the same value can answer a request with no network at all.
///
/// ```swift
/// server.enqueue(.tooManyRequests(retryAfter: 1))
/// server.enqueue(MockResponse(body: "hello").delayed(by: .milliseconds(200)))
/// server.enqueue(.chunked(["a", "b", "c"], delayBetweenChunks: .milliseconds(50)))
/// server.enqueue(MockResponse(body: bigBody).throttled(bytesPerSecond: 10_000).disconnecting(afterBodyBytes: 4096))
/// ```
///
/// Framing: a whole body is sent with `Content-Length`, a chunked one with `Transfer-Encoding: chunked`, unless
/// ``headers`` already hold either field, which is then sent as written (a test can make the server lie).
public struct MockResponse: Hashable, Sendable {
    /// The body and its framing.
    public enum Body: Hashable, Sendable {
        /// Sent whole, with `Content-Length`.
        case whole([UInt8])
        /// Sent with `Transfer-Encoding: chunked`, one chunk per element (empty elements are skipped: an empty
        /// chunk would end the body).
        case chunked([[UInt8]])
    }

    public var status: Int
    public var headers: HTTPHeaders
    public var body: Body
    /// How long the server waits after reading the request before it sends the head.
    public var delayBeforeHead: Duration = .zero
    /// How long the server waits between two chunks of a chunked body.
    public var delayBetweenChunks: Duration = .zero
    /// The pace of the body: this many body bytes per second, sent in slices a twentieth of a second apart;
    /// nil sends as fast as the connection takes it.
    public var bytesPerSecond: Int?
    /// Close the connection once this many body bytes are sent (the rest never comes); nil sends the whole body.
    public var disconnectAfterBodyBytes: Int?
    /// Send `Connection: close` and close the connection after the response.
    public var closesConnection = false

    public init(status: Int = 200, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = .whole(body)
    }

    public init(status: Int = 200, headers: HTTPHeaders = HTTPHeaders(), body: String) {
        self.init(status: status, headers: headers, body: Array(body.utf8))
    }

    /// The body's bytes, chunks joined.
    public var bodyBytes: [UInt8] {
        switch body {
        case .whole(let bytes): return bytes
        case .chunked(let chunks): return chunks.flatMap { $0 }
        }
    }

    // MARK: - Shapes

    /// A chunked body, one chunk per element, with `delayBetweenChunks` between them.
    public static func chunked(
        _ chunks: [[UInt8]], status: Int = 200, headers: HTTPHeaders = HTTPHeaders(), delayBetweenChunks: Duration = .zero
    ) -> MockResponse {
        var response = MockResponse(status: status, headers: headers)
        response.body = .chunked(chunks)
        response.delayBetweenChunks = delayBetweenChunks
        return response
    }

    /// A chunked body of UTF-8 text chunks.
    public static func chunked(
        _ chunks: [String], status: Int = 200, headers: HTTPHeaders = HTTPHeaders(), delayBetweenChunks: Duration = .zero
    ) -> MockResponse {
        chunked(chunks.map { Array($0.utf8) }, status: status, headers: headers, delayBetweenChunks: delayBetweenChunks)
    }

    /// A `text/plain` body.
    public static func text(_ text: String, status: Int = 200) -> MockResponse {
        MockResponse(status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: text)
    }

    /// An `application/json` body (already encoded).
    public static func json(_ json: String, status: Int = 200) -> MockResponse {
        MockResponse(status: status, headers: ["Content-Type": "application/json"], body: json)
    }

    /// An empty body with `status`.
    public static func status(_ status: Int) -> MockResponse {
        MockResponse(status: status)
    }

    /// `429 Too Many Requests` with `Retry-After: <seconds>`.
    public static func tooManyRequests(retryAfter seconds: Int) -> MockResponse {
        MockResponse(status: 429, headers: ["Retry-After": String(seconds)], body: "too many requests\n")
    }

    /// `503 Service Unavailable` with `Retry-After: <seconds>`.
    public static func serviceUnavailable(retryAfter seconds: Int) -> MockResponse {
        MockResponse(status: 503, headers: ["Retry-After": String(seconds)], body: "service unavailable\n")
    }

    /// `401 Unauthorized` with `WWW-Authenticate: <challenge>`.
    public static func unauthorized(challenge: String = #"Bearer realm="mock""#) -> MockResponse {
        MockResponse(status: 401, headers: ["WWW-Authenticate": challenge], body: "unauthorized\n")
    }

    // MARK: - Modifiers

    /// This response with `delay` before its head.
    public func delayed(by delay: Duration) -> MockResponse {
        var copy = self
        copy.delayBeforeHead = delay
        return copy
    }

    /// This response with its body paced at `bytesPerSecond`.
    public func throttled(bytesPerSecond: Int) -> MockResponse {
        var copy = self
        copy.bytesPerSecond = bytesPerSecond
        return copy
    }

    /// This response cut after `count` body bytes: the connection closes there.
    public func disconnecting(afterBodyBytes count: Int) -> MockResponse {
        var copy = self
        copy.disconnectAfterBodyBytes = count
        return copy
    }

    /// This response with `Connection: close`, the connection closed after it.
    public func closingConnection() -> MockResponse {
        var copy = self
        copy.closesConnection = true
        return copy
    }

    /// This response with one more header field.
    public func adding(header name: String, _ value: String) -> MockResponse {
        var copy = self
        copy.headers.add(name: name, value: value)
        return copy
    }

    // MARK: - Checks

    /// Why this response cannot be sent, if it cannot; `maxDelay` caps the sum of its waits.
    package func problem(maxDelay: Duration) -> String? {
        guard (200...599).contains(status) else { return "status \(status) is not a final status (200...599)" }
        if let field = headers.firstInvalidField { return "the header field '\(field.name.prefix(40))' is not valid" }
        if let rate = bytesPerSecond, rate < 1 { return "bytesPerSecond must be at least 1, not \(rate)" }
        if let count = disconnectAfterBodyBytes, count < 0 { return "disconnectAfterBodyBytes must not be negative" }
        guard delayBeforeHead >= .zero, delayBetweenChunks >= .zero else { return "a delay must not be negative" }
        let total = MockWirePlan(self, headOnly: false, keepAlive: true).totalWait
        guard total <= maxDelay else { return "the response's waits add up to \(total), over the cap of \(maxDelay)" }
        return nil
    }
}
