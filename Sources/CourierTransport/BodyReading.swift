internal import CourierCore
internal import CourierHTTP1

/// The one place a response body is read: chunk by chunk for a stream, whole (with the direct-receive fast path)
/// for ``HTTPClient/execute(_:)``, or drained and dropped (a redirect's or a retried response's body). Decoding,
/// the body limit, the byte counts, giving the connection back to the pool (or closing it) and turning a failure
/// into a ``CourierError`` all happen here, once.
///
/// A value, not an object, so that `execute()` reads a body with no allocation of its own; the streaming
/// ``ResponseBodyReader`` keeps one under its lock. Once the body ended, failed or was abandoned the connection
/// is gone and every read returns nil (ended) or throws (failed or abandoned).
///
/// The body's source is a connection, or (``init(plugin:pool:url:deadline:start:metrics:)``) a protocol plugin's
/// ``ProtocolBody``: the same three ways of reading, limits, counts and errors apply to both, so a plugin's answer
/// is read by the one body reader like a server's (each chunk raced against the request's deadline; never decoded).
struct BodyReading: Sendable {
    private var connection: HTTP1Connection?
    /// A plugin's body while it is being read (then `connection` is nil).
    private var plugin: ProtocolBody?
    private let pool: ConnectionPool
    private var decoder: ContentDecoder?
    let url: HTTPURL
    private let deadline: Deadline
    private let idle: Duration
    private let start: Deadline
    /// Bytes and timings so far; final once the body has ended.
    private(set) var metrics: RequestMetrics
    /// The trailer fields of a chunked body (after the end).
    private(set) var trailers = HTTPHeaders()
    /// Why reads stop: nil while the body is being read.
    private var outcome: Outcome?

    private enum Outcome {
        case ended
        case failed(CourierError)
    }

    init(
        connection: HTTP1Connection, pool: ConnectionPool, decoder: sending ContentDecoder?, url: HTTPURL,
        deadline: Deadline, idle: Duration, start: Deadline, metrics: RequestMetrics
    ) {
        self.connection = connection
        self.pool = pool
        self.decoder = decoder
        self.url = url
        self.deadline = deadline
        self.idle = idle
        self.start = start
        self.metrics = metrics
    }

    /// A plugin's answer's body, read as a connection's would be. `metrics` count the body's bytes as received.
    init(plugin body: ProtocolBody, pool: ConnectionPool, url: HTTPURL, deadline: Deadline, start: Deadline, metrics: RequestMetrics) {
        self.plugin = body
        self.pool = pool
        self.url = url
        self.deadline = deadline
        self.idle = .zero
        self.start = start
        self.metrics = metrics
    }

    /// The connection's byte stream while the body is being read (what a streaming reader closes to wake a read in
    /// progress).
    var stream: (any ByteStream)? { connection?.stream }

    /// Whether the connection is still held (the body has neither ended nor failed).
    var isReading: Bool { connection != nil || plugin != nil }

    // MARK: - Reading

    /// The next chunk of the body (decoded when the response was compressed); nil at its end, when the
    /// connection has gone back to the pool.
    nonisolated(nonsending) mutating func next() async throws(CourierError) -> ArraySlice<UInt8>? {
        guard let connection else { return plugin == nil ? try ended() : try await nextFromPlugin() }
        do {
            while true {
                if let chunk = try await step(connection) { return chunk }
                if connection !== self.connection { return nil }
            }
        } catch {
            throw fail(connection, error)
        }
    }

    /// The whole body, at most `limit` bytes (decoded); larger fails with `body-too-large` and closes the
    /// connection. The part of a `Content-Length` body that did not arrive with the head (and needs no decoding)
    /// is received straight into the body's array: no read buffer, no copy, reads as large as the socket holds.
    nonisolated(nonsending) mutating func collect(limit: Int, expectedLength: Int?) async throws(CourierError) -> [UInt8] {
        guard let connection else {
            if plugin != nil { return try await collectFromPlugin(limit: limit, expectedLength: expectedLength) }
            _ = try ended()
            return []
        }
        var body = BoundedBody(limit: limit, expectedLength: expectedLength)
        do {
            while true {
                if decoder == nil, connection.canReceiveBodyDirectly(limit: body.room) {
                    try await connection.receiveBodyDirectly(into: &body.bytes, deadline: deadline, idle: idle)
                }
                guard let chunk = try await step(connection) else {
                    if connection !== self.connection { return body.bytes }
                    continue
                }
                guard body.append(chunk) else {
                    throw abandon(connection, because: CourierError(.bodyTooLarge, "the body is larger than \(limit) bytes"))
                }
            }
        } catch {
            throw fail(connection, error)
        }
    }

    /// Reads and drops the rest of the body so the connection can be reused, up to `limit` bytes; beyond that
    /// (or on any failure) the connection is closed instead. Never throws: a body nobody wants cannot fail a
    /// request.
    nonisolated(nonsending) mutating func drain(limit: Int = 64 * 1024) async {
        // Nobody reads a dropped body: it is not decoded.
        decoder = nil
        var drained = 0
        while isReading {
            do throws(CourierError) {
                guard let chunk = try await next() else { return }
                drained += chunk.count
                if drained > limit { cancel() }
            } catch {
                return
            }
        }
    }

    /// Stops reading: the connection is closed (a half-read HTTP/1.1 response cannot be reused).
    mutating func cancel() {
        if let plugin {
            self.plugin = nil
            plugin.cancel()
            outcome = .failed(stamped(CourierError(.cancelled, "the body was abandoned")))
        }
        guard let connection else { return }
        _ = abandon(connection, because: nil)
    }

    // MARK: - A plugin's body

    /// The plugin body's next chunk, raced against the deadline; nil at its end.
    nonisolated(nonsending) private mutating func nextFromPlugin() async throws(CourierError) -> ArraySlice<UInt8>? {
        guard let body = plugin else { return try ended() }
        let url = self.url
        do {
            let chunk = try await DeadlineRace.run(
                timeout: deadline - .now(), timedOut: CourierError(.timeout, "the total deadline passed", url: url.description),
                url: url.description
            ) { () async throws(CourierError) -> [UInt8]? in
                do {
                    return try await body.next()
                } catch {
                    throw CourierError.fromPlugin(error, url: url)
                }
            }
            guard let chunk else {
                plugin = nil
                metrics.total = Deadline.now() - start
                outcome = .ended
                return nil
            }
            metrics.bytesReceived += Int64(chunk.count)
            return chunk[...]
        } catch {
            plugin = nil
            body.cancel()
            let failure = stamped(error)
            outcome = .failed(failure)
            throw failure
        }
    }

    /// The plugin body whole, at most `limit` bytes.
    nonisolated(nonsending) private mutating func collectFromPlugin(limit: Int, expectedLength: Int?) async throws(CourierError) -> [UInt8] {
        var body = BoundedBody(limit: limit, expectedLength: expectedLength)
        while let chunk = try await nextFromPlugin() {
            guard body.append(chunk) else {
                cancel()
                let failure = stamped(CourierError(.bodyTooLarge, "the body is larger than \(limit) bytes"))
                outcome = .failed(failure)
                throw failure
            }
        }
        return body.bytes
    }

    /// `error` with this body's URL (unless it has one) and byte counts.
    private func stamped(_ error: CourierError) -> CourierError {
        var failure = error
        if failure.url == nil { failure.url = url.description }
        failure.bytesSent = metrics.bytesSent
        failure.bytesReceived = metrics.bytesReceived
        return failure
    }

    // MARK: - Steps

    /// One event from the connection: a chunk to hand over, or nil (trailers recorded, a decoder that produced
    /// nothing yet, or the end, after which the connection is released and `self.connection` is nil).
    nonisolated(nonsending) private mutating func step(_ connection: HTTP1Connection) async throws -> ArraySlice<UInt8>? {
        let event = try await connection.nextEvent(deadline: deadline, idle: idle)
        switch event {
        case .head:
            return nil
        case .body(let bytes):
            guard let decoder else { return bytes }
            let decoded = try decoder.decode(bytes)
            return decoded.isEmpty ? nil : decoded[...]
        case .trailers(let fields):
            trailers = fields
            return nil
        case .end:
            try decoder?.finish()
            metrics.bytesReceived += connection.bytesReceived
            metrics.total = Deadline.now() - start
            self.connection = nil
            outcome = .ended
            pool.release(connection, reusable: connection.reusable)
            return nil
        }
    }

    /// After the body ended (nil) or failed or was abandoned (the error again).
    private func ended() throws(CourierError) -> ArraySlice<UInt8>? {
        switch outcome {
        case .failed(let error): throw error
        case .ended, nil: return nil
        }
    }

    /// Closes the connection after a failure (unless a step already released it) and returns the error to throw,
    /// with the bytes moved so far.
    private mutating func fail(_ connection: HTTP1Connection, _ error: any Error) -> CourierError {
        if case .failed(let known)? = outcome { return known }
        if self.connection != nil {
            metrics.bytesReceived += connection.bytesReceived
            _ = connection.fail(.init(error))
            self.connection = nil
            pool.release(connection, reusable: false)
        }
        var failure = CourierError.from(error, url: url.description, deadline: deadline, timeouts: nil)
        if pool.wasClosedByShutdown { failure = failure.cutOffByShutdown() }
        failure.bytesSent = metrics.bytesSent
        failure.bytesReceived = metrics.bytesReceived
        outcome = .failed(failure)
        return failure
    }

    /// Gives the connection up mid-body (closed, not reused); `error` is what later reads throw (a cancellation
    /// when nil).
    private mutating func abandon(_ connection: HTTP1Connection, because error: CourierError?) -> CourierError {
        metrics.bytesReceived += connection.bytesReceived
        connection.abandon()
        self.connection = nil
        pool.release(connection, reusable: false)
        let failure = stamped(error ?? CourierError(.cancelled, "the body was abandoned"))
        outcome = .failed(failure)
        return failure
    }
}
