public import CoreMetrics
public import CourierCore
internal import CourierHTTP1
package import CourierPosix
public import Logging
internal import Synchronization

/// Courier's HTTP/1.1 client over its own non-blocking sockets.
///
/// - A pool of kept-alive connections per origin (and connect address), with a per-host limit and FIFO
///   fairness; idle connections close after ``HTTPClientConfiguration/idleTimeout``.
/// - A request that fails on a reused connection before any response byte (the server closed it while idle) is
///   retried once on a fresh connection when its method is idempotent.
/// - Connect, idle-read and total timeouts; the total deadline covers redirects and the body.
/// - Redirects (301/302/303/307/308) per RFC 9110, up to a limit; credentials are dropped on a cross-origin hop.
/// - gzip and deflate decoding with a decoded-size limit; `Accept-Encoding` sent by default.
/// - Every failure is a ``CourierError`` whose `kind` says what went wrong.
/// - ``shutdown(gracePeriod:)`` stops it gracefully: new requests are refused, those in flight may finish within
///   a grace period, then every connection is closed (and the loops stopped, when the client made its own).
public final class HTTPClient: Sendable {
    /// The settings every request of this client uses unless the request overrides them.
    public let configuration: HTTPClientConfiguration
    let pool: ConnectionPool
    let loops: EventLoopGroup
    /// Whether the client made its loops itself, and so stops it when it shuts down or is freed.
    let ownsLoops: Bool
    /// The graceful shutdown's sequencing.
    let lifecycle = GracefulShutdown()
    /// Requests between their start and their response head (whole bodies included for ``execute(_:)``); a
    /// streamed body is counted by the pool, as the connection it holds.
    let exchanges = Atomic<Int>(0)

    /// Makes a client on Courier's shared event loops (one per core, started on first use and never stopped), with
    /// the system's resolver.
    ///
    /// - Parameters:
    ///   - configuration: how requests behave unless they say otherwise.
    ///   - backgroundLogger: where the pool's connection events go, at `trace` level (connect, reuse, idle close,
    ///     stale detection), with no request's data in them; by default nowhere. Courier never bootstraps
    ///     swift-log's `LoggingSystem`.
    ///   - metricsFactory: where the connection gauges (`courier_connections`, docs/observability.md) go; by
    ///     default swift-metrics' no-op factory, which costs nothing. Not the global `MetricsSystem`'s unless
    ///     passed.
    public convenience init(
        configuration: HTTPClientConfiguration = HTTPClientConfiguration(),
        backgroundLogger: Logger = HTTPClient.loggingDisabled,
        metricsFactory: any MetricsFactory = NOOPMetricsHandler.instance
    ) {
        self.init(
            configuration: configuration, loops: .shared, owningLoops: false, resolver: .shared,
            backgroundLogger: backgroundLogger, metricsFactory: metricsFactory
        )
    }

    /// Makes a client on given loops and resolver (tests, and Courier's own tools, choose them).
    package convenience init(
        configuration: HTTPClientConfiguration = HTTPClientConfiguration(),
        eventLoopGroup: EventLoopGroup,
        resolver: Resolver = .shared,
        backgroundLogger: Logger = HTTPClient.loggingDisabled,
        metricsFactory: any MetricsFactory = NOOPMetricsHandler.instance
    ) {
        self.init(
            configuration: configuration, loops: eventLoopGroup, owningLoops: false, resolver: resolver,
            backgroundLogger: backgroundLogger, metricsFactory: metricsFactory
        )
    }

    init(
        configuration: HTTPClientConfiguration, loops: EventLoopGroup, owningLoops: Bool, resolver: Resolver,
        backgroundLogger: Logger, metricsFactory: any MetricsFactory
    ) {
        self.configuration = configuration
        self.loops = loops
        self.ownsLoops = owningLoops
        self.pool = ConnectionPool(
            configuration: configuration, loops: loops, connector: Connector(resolver: resolver, loops: loops),
            logger: backgroundLogger, gauges: ConnectionGauges(factory: metricsFactory)
        )
    }

    deinit {
        if ownsLoops && !lifecycle.isClosed { Self.stop(loops) }
    }

    /// The event loops this client's connections live on.
    package var eventLoopGroup: EventLoopGroup { loops }

    /// One of the event loops this client's connections live on, as a task executor; each call hands out the next
    /// loop in turn.
    ///
    /// Code that makes many requests runs fastest on one of them: inside
    /// `withTaskExecutorPreference(client.nextExecutor()) { ... }` a response resumes the waiting task on the loop
    /// thread that saw it arrive, with no hop to another thread (a fifth to a quarter less CPU per request at 64
    /// requests in flight, Benchmarks/README.md). Such code shares the loop with every connection on it, so it must
    /// not block or compute for long.
    public func nextExecutor() -> any TaskExecutor { loops.next() }

    /// Sends a request, following redirects, and reads the whole body (up to
    /// ``HTTPClientConfiguration/maxBodyBytes``).
    ///
    /// A body over 128 KiB (or of unknown length) is read with an event loop as the task's executor, so each of
    /// its many parked reads resumes on the loop thread; the rest of the exchange runs on the caller's executor
    /// unless ``HTTPClientConfiguration/runsRequestsOnEventLoop`` is set (see there for the measurements). A
    /// caller already on one of the client's loops (``nextExecutor()``) stays there.
    public func execute(_ request: HTTPRequest) async throws(CourierError) -> HTTPResponse {
        try enter(request)
        defer { leave() }
        guard configuration.runsRequestsOnEventLoop, loops.current == nil else { return try await collect(request) }
        return try await withTaskExecutorPreference(loops.next()) { () async throws(CourierError) -> HTTPResponse in
            try await self.collect(request)
        }
    }

    nonisolated(nonsending) private func collect(_ request: HTTPRequest) async throws(CourierError) -> HTTPResponse {
        try await readWhole(try await followingRedirects(request), limit: configuration.maxBodyBytes)
    }

    /// Sends a request, following redirects, and returns as soon as the final response head arrives; the body is
    /// read from ``StreamingResponse/body`` as the caller consumes it (backpressure: nothing is read ahead).
    public func stream(_ request: HTTPRequest) async throws(CourierError) -> StreamingResponse {
        try enter(request)
        defer { leave() }
        return streaming(try await followingRedirects(request))
    }

    // MARK: - One exchange, and its body

    /// Sends one request and returns when its response head arrives: no redirect is followed (the caller decides
    /// with a ``RedirectFollower``), and the body is left on the connection for the caller to read once, with
    /// ``readWhole(_:limit:)``, ``streaming(_:)`` or ``HTTPExchange/drain()``.
    ///
    /// `deadline` is the request's one absolute deadline (the body's reading included); every read and write
    /// waits at most the idle timeout (`request.timeouts`, else the client's) from its start, within it.
    nonisolated(nonsending) package func exchange(
        _ request: HTTPRequest, deadline: Deadline
    ) async throws(CourierError) -> HTTPExchange {
        try enter(request)
        defer { leave() }
        try validate(request)
        return try await hop(
            request, timeouts: request.timeouts ?? configuration.timeouts, deadline: deadline, start: .now(),
            metrics: RequestMetrics()
        )
    }

    /// Reads an exchange's whole body, at most `limit` bytes (decoded), with ``BodyReading``'s direct-receive fast
    /// path, on the stack: no reader object, lock or async call per chunk. A large body (or one of unknown length)
    /// takes many reads; reading it with the event loop as the task's executor resumes each parked read on the
    /// loop thread instead of hopping to another thread per read. For a small body the two hops onto the loop and
    /// back would cost more than they save.
    nonisolated(nonsending) package func readWhole(_ exchange: HTTPExchange, limit: Int) async throws(CourierError) -> HTTPResponse {
        if !configuration.runsRequestsOnEventLoop && (exchange.expectedLength ?? Int.max) > 128 * 1024 && loops.current == nil {
            return try await withTaskExecutorPreference(loops.next()) { () async throws(CourierError) -> HTTPResponse in
                try await Self.collectBody(exchange, limit: limit)
            }
        }
        return try await Self.collectBody(exchange, limit: limit)
    }

    nonisolated(nonsending) private static func collectBody(_ exchange: borrowing HTTPExchange, limit: Int) async throws(CourierError) -> HTTPResponse {
        var reading = exchange.reading
        let body = try await reading.collect(limit: limit, expectedLength: exchange.expectedLength)
        return HTTPResponse(head: exchange.head, body: body, trailers: reading.trailers, url: exchange.url, metrics: reading.metrics)
    }

    /// An exchange whose body is read chunk by chunk as the caller consumes it.
    package func streaming(_ exchange: HTTPExchange) -> StreamingResponse {
        let reader = ResponseBodyReader(exchange.reading)
        return StreamingResponse(head: exchange.head, url: exchange.url, body: reader)
    }

    /// Sends a request, following redirects as a ``RedirectFollower`` decides, until a final response head
    /// arrives. The one absolute deadline covers every hop and the body.
    nonisolated(nonsending) private func followingRedirects(_ request: HTTPRequest) async throws(CourierError) -> HTTPExchange {
        let start = Deadline.now()
        let timeouts = request.timeouts ?? configuration.timeouts
        let deadline = start + timeouts.total
        try validate(request)
        var follower = RedirectFollower(limit: request.maxRedirects ?? configuration.maxRedirects)
        var current = request
        var metrics = RequestMetrics()
        while true {
            // A `let`: the usual answer is returned as it is, never copied; only a redirect's is changed (drained).
            let exchange = try await hop(current, timeouts: timeouts, deadline: deadline, start: start, metrics: metrics)
            let next: RedirectFollower.Hop?
            do {
                next = try follower.next(
                    status: exchange.head.status, location: exchange.head.headers["location"], method: current.method,
                    url: current.url, headers: current.headers, bodyReplayable: current.body.isReplayable
                )
            } catch {
                var dropped = exchange
                throw failure(error, url: current.url, deadline: deadline, timeouts: timeouts, metrics: dropped.abandon())
            }
            guard let next else { return exchange }
            // The redirect's own body is read and dropped so the connection can be reused.
            var redirect = exchange
            metrics = await redirect.drain()
            follower.follow()
            metrics.redirects = follower.followed
            current = current.following(next)
        }
    }

    /// Refuses header injection and bad methods before any connection is made.
    @inline(never)
    private func validate(_ request: HTTPRequest) throws(CourierError) {
        if let bad = request.headers.firstInvalidField {
            throw CourierError(
                .policy, "the header '\(bad.name)' has an invalid name or a CR, LF or NUL in its value; nothing was sent",
                url: request.url.description
            )
        }
        guard request.method.isValidToken else {
            throw CourierError(.policy, "'\(request.method)' is not a valid method; nothing was sent", url: request.url.description)
        }
    }

    /// The error a failed exchange throws, with the bytes and attempts so far.
    @inline(never)
    private func failure(
        _ error: any Error, url: HTTPURL, deadline: Deadline, timeouts: TimeoutPolicy, metrics: RequestMetrics
    ) -> CourierError {
        var failure = CourierError.from(error, url: url.description, deadline: deadline, timeouts: timeouts)
        if pool.wasClosedByShutdown { failure = failure.cutOffByShutdown() }
        failure.bytesSent = metrics.bytesSent
        failure.bytesReceived = metrics.bytesReceived
        failure.attempts = metrics.attempts
        return failure
    }

    /// Closes idle connections and fails waiting requests (with `shutdown`). Requests in flight finish; new
    /// ones fail. Returns at once; ``shutdown(gracePeriod:)`` is the graceful, complete form.
    public func shutdown() {
        pool.shutdown()
    }

    /// Open connections (idle and in use), for tests and metrics.
    public var openConnectionCount: Int { pool.openConnectionCount }

    // MARK: - One hop

    /// One hop: leases a connection, sends the request and reads the response head, retrying once on a fresh
    /// connection when a reused one turns out to have been closed by the server before answering. `metrics` are
    /// the figures of the hops before (redirects the client followed).
    nonisolated(nonsending) private func hop(
        _ request: HTTPRequest, timeouts: TimeoutPolicy, deadline: Deadline, start: Deadline,
        metrics: RequestMetrics
    ) async throws(CourierError) -> HTTPExchange {
        var metrics = metrics
        do {
            // A plugin's scheme (or http(s), when a plugin claims it): no connection at all.
            if !request.url.isHTTP || request.protocols?.claimsHTTP ?? configuration.protocols.claimsHTTP,
                let answer = try await answerByPlugin(request, deadline: deadline, start: start, metrics: metrics)
            {
                return answer
            }
            let (connection, head) = try await attempt(request, timeouts: timeouts, deadline: deadline, start: start, metrics: &metrics)
            let decoder: ContentDecoder?
            do {
                decoder = try makeDecoder(for: head, request: request)
            } catch {
                connection.abandon()
                pool.release(connection, reusable: false)
                throw error
            }
            let length = request.method == .head ? 0 : head.headers["content-length"].flatMap { Int($0) }
            return HTTPExchange(
                head: head, url: request.url,
                reading: BodyReading(
                    connection: connection, pool: pool, decoder: decoder, url: request.url, deadline: deadline,
                    idle: timeouts.idle, start: start, metrics: metrics
                ),
                expectedLength: length
            )
        } catch {
            throw failure(error, url: request.url, deadline: deadline, timeouts: timeouts, metrics: metrics)
        }
    }

    /// Leases a connection, sends the request and reads the response head. Retries once on a fresh connection
    /// when a reused one turns out to have been closed by the server before answering.
    nonisolated(nonsending) private func attempt(
        _ request: HTTPRequest, timeouts: TimeoutPolicy, deadline: Deadline,
        start: Deadline, metrics: inout RequestMetrics
    ) async throws -> (HTTP1Connection, HTTPResponseHead) {
        let (key, head) = try prepare(request)
        metrics.attempts = 0
        for attemptNumber in 1...2 {
            metrics.attempts = attemptNumber
            let now = Deadline.now()
            guard now < deadline else { throw TotalDeadline() }
            let connection = try await pool.lease(key, connectDeadline: min(now + timeouts.connect, deadline))
            leased(connection, metrics: &metrics)
            do {
                try await connection.send(
                    head: head, hostHeader: request.url.hostHeader, body: request.body,
                    deadline: deadline, idle: timeouts.idle
                )
                while true {
                    let event = try await connection.nextEvent(deadline: deadline, idle: timeouts.idle)
                    if case .head(let responseHead) = event {
                        headArrived(on: connection, start: start, metrics: &metrics)
                        configuration.exchangeObserver?.received(head: responseHead)
                        return (connection, responseHead)
                    }
                }
            } catch {
                guard attemptFailed(connection, error: error, number: attemptNumber, request: request, key: key, metrics: &metrics)
                else { throw error }
            }
        }
        preconditionFailure("unreachable: the second attempt returns or throws")
    }

    /// The pool key and the request head (with the default headers added) of a request.
    @inline(never)
    private func prepare(_ request: HTTPRequest) throws(CourierError) -> (PoolKey, HTTPRequestHead) {
        // A request over a Unix domain socket goes to its socket, never through a proxy (as curl's --unix-socket).
        let proxy = request.unixSocketPath != nil ? nil
            : try request.proxySelection.map { s throws(CourierError) in try s.decide(for: request.url).proxy } ?? request.proxy
        let key = PoolKey(
            scheme: request.url.scheme, host: request.url.host, port: request.url.port,
            connectHost: request.connectTo?.host ?? request.url.host,
            connectPort: request.connectTo?.port ?? request.url.port,
            tls: request.url.scheme == "https" ? request.tls ?? request.tlsOverlay?.overlaid(on: configuration.tls) ?? configuration.tls : nil,
            unixSocketPath: request.unixSocketPath,
            proxy: proxy
        )
        var head = HTTPRequestHead(method: request.method, url: request.url, headers: request.headers)
        if let proxy, key.tls == nil, !proxy.scheme.isSOCKS { head.forwardProxy(proxy, key: key) }
        let encoding = request.decompress && !head.headers.contains("accept-encoding") ? ContentCoding.acceptEncoding : nil
        // The one place User-Agent is added: the request's own agent (the loader's), else the client's.
        var agent = request.userAgent ?? configuration.userAgent
        if agent?.isEmpty == true || head.headers.contains("user-agent") { agent = nil }
        if let encoding, let agent {
            // Both fields in one growth of the head's field list and bytes, not one each.
            head.headers.reserveCapacity(adding: 2, bytes: 25 + encoding.utf8.count + agent.utf8.count)
        }
        if let encoding { head.headers.add(name: "Accept-Encoding", value: encoding) }
        if let agent { head.headers.add(name: "User-Agent", value: agent) }
        return (key, head)
    }

    /// Records a leased connection's set-up timings (once) and whether it was reused.
    @inline(never)
    private func leased(_ connection: HTTP1Connection, metrics: inout RequestMetrics) {
        if let setup = connection.setup {
            metrics.dns = (metrics.dns ?? .zero) + (setup.dns ?? .zero)
            metrics.connect = (metrics.connect ?? .zero) + (setup.connect ?? .zero)
            if let tls = setup.tls { metrics.tls = (metrics.tls ?? .zero) + tls }
            connection.setup = nil
        }
        metrics.reusedConnection = connection.wasReused
        metrics.tlsSession = connection.stream.tlsInfo
        if let observer = configuration.exchangeObserver {
            connection.observer = observer
            observer.connection(ExchangeConnection(
                host: connection.key.host, port: connection.key.port, address: connection.stream.peerAddress,
                reused: connection.wasReused, tls: connection.stream.tlsInfo
            ))
        }
    }

    @inline(never)
    private func headArrived(on connection: HTTP1Connection, start: Deadline, metrics: inout RequestMetrics) {
        metrics.bytesSent += connection.bytesSent
        if let first = connection.firstByteAt { metrics.timeToFirstByte = first - start }
    }

    /// Closes the connection of a failed attempt; returns whether to try again on a fresh connection.
    @inline(never)
    private func attemptFailed(
        _ connection: HTTP1Connection, error: any Error, number: Int, request: HTTPRequest, key: PoolKey,
        metrics: inout RequestMetrics
    ) -> Bool {
        metrics.bytesSent += connection.bytesSent
        metrics.bytesReceived += connection.bytesReceived
        let failure = connection.fail(HTTP1ConnectionStateMachine.FailureCause(error))
        pool.release(connection, reusable: false)
        if number == 1, failure?.shouldRetryOnFreshConnection == true, request.body.isReplayable, !CancellationScope.isCancelled {
            pool.closeIdle(key)
            return true
        }
        return false
    }

    private func makeDecoder(for head: HTTPResponseHead, request: HTTPRequest) throws -> ContentDecoder? {
        guard request.decompress, request.method != .head else { return nil }
        let codings = head.headers.tokens(for: "content-encoding").filter { $0 != "identity" }
        guard codings.count == 1, let coding = ContentCoding(token: codings[0]) else { return nil }
        return try ContentDecoder(coding: coding, maxDecodedBytes: configuration.maxDecodedBytes)
    }

}

/// The request's total deadline passed.
struct TotalDeadline: Error {}
