internal import CourierCore
internal import CourierHTTP1

extension HTTPClient {
    /// One exchange answered by the protocol plugin that claims the request's scheme, instead of a connection: the
    /// plugin's head becomes the exchange's, and its body is read through ``BodyReading`` like a connection's.
    /// The plugin's answer is raced against `deadline` (and cancellation); what it throws becomes a
    /// ``CourierError`` (``CourierError/fromPlugin(_:url:)``). A scheme no plugin claims fails with `policy`, but
    /// http(s) (when a plugin claims the other one) is nil: the sockets answer it.
    nonisolated(nonsending) func answerByPlugin(
        _ request: HTTPRequest, deadline: Deadline, start: Deadline, metrics: RequestMetrics
    ) async throws(CourierError) -> HTTPExchange? {
        let url = request.url
        guard let plugin = (request.protocols ?? configuration.protocols).plugin(for: url.scheme) else {
            if url.isHTTP { return nil }
            throw CourierError(.policy, "no protocol plugin answers '\(url.scheme):' URLs; nothing was sent", url: url.description)
        }
        var headers = request.headers
        // As on the wire (`prepare`): the request's own agent (the loader's), else the client's.
        if let agent = request.userAgent ?? configuration.userAgent, !agent.isEmpty, !headers.contains("user-agent") {
            headers.add(name: "User-Agent", value: agent)
        }
        let asked = ProtocolRequest(method: request.method, url: url, headers: headers, body: .of(request.body), connectTo: request.connectTo)
        let answer = try await DeadlineRace.run(
            timeout: deadline - .now(),
            timedOut: CourierError(.timeout, "the total deadline passed before the '\(url.scheme):' plugin answered", url: url.description),
            url: url.description
        ) { () async throws(CourierError) -> ProtocolResponse in
            do {
                return try await plugin.respond(to: asked)
            } catch {
                throw CourierError.fromPlugin(error, url: url)
            }
        }
        guard (200...599).contains(answer.status) else {
            answer.body.cancel()
            throw CourierError(
                .protocolPlugin, "the '\(url.scheme):' plugin answered status \(answer.status), not a final one (200-599)",
                url: url.description
            )
        }
        var metrics = metrics
        metrics.attempts = 1
        metrics.timeToFirstByte = Deadline.now() - start
        let head = HTTPResponseHead(status: answer.status, reason: answer.reason, headers: answer.headers)
        configuration.exchangeObserver?.received(head: head)
        var body = answer.body
        if request.method == .head {
            body.cancel()
            body = .empty
        }
        return HTTPExchange(
            head: head, url: url,
            reading: BodyReading(plugin: body, pool: pool, url: url, deadline: deadline, start: start, metrics: metrics),
            expectedLength: request.method == .head ? 0 : answer.headers["content-length"].flatMap { Int($0) }
        )
    }
}

extension CourierError {
    /// What a protocol plugin threw, as the error a load fails with: a ``CourierError`` as it is (a plugin may fail
    /// as a network would), a cancellation as `cancelled`, anything else as `protocol-plugin` with its description.
    static func fromPlugin(_ error: any Error, url: HTTPURL) -> CourierError {
        switch error {
        case var known as CourierError:
            if known.url == nil { known.url = url.description }
            return known
        case is CancellationError:
            return CourierError(.cancelled, "the request was cancelled", url: url.description)
        default:
            return CourierError(
                .protocolPlugin, "the '\(url.scheme):' plugin failed: \(error)", url: url.description,
                cause: error
            )
        }
    }
}

extension ProtocolBody {
    /// A request's body as a plugin reads it.
    static func of(_ body: HTTPRequest.Body) -> ProtocolBody {
        switch body {
        case .none: return .empty
        case .bytes(let bytes): return .bytes(bytes)
        case .stream(let stream), .sizedStream(_, let stream): return .stream(stream)
        }
    }
}
