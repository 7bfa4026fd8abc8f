public import CourierKit
internal import CourierCore
public import FoundationEssentials
public import HTTPTypes
public import OpenAPIRuntime

/// A swift-openapi-runtime `ClientTransport` that sends every request of a generated client through a Courier
/// ``DataLoader``: the policy route of each URL decides its timeouts, rate limit, retries, fallbacks, authoriser,
/// TLS rules and caching, with no code of the client's own.
///
/// ```swift
/// let service = try DataLoaderService(policyFile: "policies/app.yaml", configuration: .init(userAgent: "MyApp/1.0"))
/// let client = Client(
///     serverURL: try Servers.Server1.url(),
///     transport: CourierOpenAPITransport(loader: service.makeFactory().makeLoader())
/// )
/// ```
///
/// - **Bodies stream both ways.** A request body goes out as a `RequestBodyStream` read as it is sent (chunked, or
///   with `Content-Length` when the body's length is known), except a body of known length up to
///   ``bufferedBodyLimit`` that can be read more than once, which is sent whole (so that an authoriser that signs
///   bodies sees it). A body the runtime can read only once (`IterationBehavior.single`) is sent in one attempt:
///   it cannot be sent again, so the request is not retried. The response is returned as soon as its head
///   arrives; its body is read from the connection as the client consumes it.
/// - **Errors keep Courier's kind.** A load that ends with no response throws its `CourierError` (the runtime
///   wraps it in its `ClientError`, whose `underlyingError` it is); so does a body that fails while it is read. A
///   response is a response, whatever its status: a status the document does not list reaches the client's
///   `undocumented(statusCode:_:)` with that status (a 503 the policy retried until it gave up, say).
/// - Every request's ``Request/sourceIdentifier`` is the operation's ID, so consumption observers count traffic
///   per operation.
public struct CourierOpenAPITransport: ClientTransport {
    /// Request bodies of known length up to this many bytes that can be read again are sent whole: 1 MiB.
    public static let bufferedBodyLimit = 1 << 20

    /// The loader every request goes through.
    public let loader: DataLoader

    /// A transport that sends each request through `loader`.
    public init(loader: DataLoader) {
        self.loader = loader
    }

    /// Sends `request` through the loader and returns the response head with a body streamed from the
    /// connection (none for a `HEAD` request).
    ///
    /// - Throws: the load's `CourierError`: `policy` for a URL Courier cannot send to, the transport's kinds
    ///   (`connect`, `timeout`, `tls-certificate`, …) after the route's retries, `cancelled`.
    public func send(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var load = Request(
            url: try Self.url(of: request, baseURL: baseURL),
            method: HTTPMethod(rawValue: request.method.rawValue),
            headers: Self.headers(request.headerFields),
            sourceIdentifier: operationID
        )
        if let body { try await Self.attach(body, to: &load) }

        let stream = loader.stream(load)
        while let event = try await stream.next() {
            guard case .response(let head) = event else { continue }
            let response = HTTPResponse(
                status: .init(code: head.status, reasonPhrase: head.reason),
                headerFields: Self.fields(head.headers)
            )
            if request.method == .head {
                while try await stream.next() != nil {}
                return (response, nil)
            }
            return (response, HTTPBody(ResponseBodySequence(stream: stream), length: Self.length(of: head), iterationBehavior: .single))
        }
        throw CourierError(.protocol, "the load ended without a response", url: load.url)
    }

    /// The absolute URL: the server URL's scheme, authority and path, then the request's path and query, as the
    /// runtime's other transports join them. A server URL with credentials in it (`user:password@`) is refused
    /// here, without repeating it: Courier sends no URL with credentials (an authoriser in the policy sends them),
    /// and the loader's own error for one would quote the URL.
    static func url(of request: HTTPRequest, baseURL: URL) throws(CourierError) -> String {
        if var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false),
            let target = URLComponents(string: request.path ?? "")
        {
            guard components.percentEncodedUser == nil && components.percentEncodedPassword == nil else {
                throw CourierError(
                    .policy, "the client's server URL carries credentials (user:password@), which Courier does not send in a URL; give them to an authoriser in the policy"
                )
            }
            var path = components.percentEncodedPath
            if path.hasSuffix("/") { path.removeLast() }
            components.percentEncodedPath = path + target.percentEncodedPath
            components.percentEncodedQuery = target.percentEncodedQuery
            if let url = components.string { return url }
        }
        // Neither URL is quoted: the server URL may carry credentials.
        throw CourierError(.policy, "cannot join the client's server URL and the operation's path into one URL")
    }

    /// The request's header fields in Courier's list, in order, repeated names kept, except the framing fields:
    /// the runtime sets `Content-Length` for a body of known length, and Courier's encoder writes `Content-Length`
    /// or `Transfer-Encoding` itself from the body it sends (and refuses a request that sets them).
    static func headers(_ fields: HTTPFields) -> HTTPHeaders {
        var headers = HTTPHeaders()
        for field in fields where field.name != .contentLength && field.name != .transferEncoding {
            headers.add(name: field.name.rawName, value: field.value)
        }
        return headers
    }

    /// The response's header fields in the runtime's list; a field name HTTP does not allow (which Courier's
    /// parser does not accept either) is left out.
    static func fields(_ headers: HTTPHeaders) -> HTTPFields {
        var fields = HTTPFields()
        for field in headers {
            guard let name = HTTPField.Name(field.name) else { continue }
            fields.append(HTTPField(name: name, value: field.value))
        }
        return fields
    }

    /// The body's length when the head gives it and the body reaches the client as it was sent: Courier decodes
    /// gzip and deflate, so a coded body's `Content-Length` is not the length of what the client reads.
    static func length(of head: ResponseHead) -> HTTPBody.Length {
        guard head.headers["content-encoding"] == nil, let text = head.headers["content-length"], let length = Int64(text),
            length >= 0
        else { return .unknown }
        return .known(length)
    }

    /// Puts `body` on the request: whole when it is small, known and can be read again; otherwise as a stream,
    /// and in one attempt when it can be read only once.
    static func attach(_ body: HTTPBody, to request: inout Request) async throws {
        var length: Int?
        if case .known(let known) = body.length { length = Int(exactly: known) }
        if let length, length <= bufferedBodyLimit, body.iterationBehavior == .multiple {
            request.body = try await [UInt8](collecting: body, upTo: length)
            return
        }
        if body.iterationBehavior == .single { request.maxAttempts = 1 }
        request.bodyStream = RequestBodyStream(length: length) {
            let reader = HTTPBodyReader(body)
            return AsyncThrowingStream(unfolding: { try await reader.next() })
        }
    }
}
