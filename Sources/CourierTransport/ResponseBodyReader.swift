import CourierCore
import CourierHTTP1
import Synchronization

/// Reads a response body from its connection as the caller asks for it, and gives the connection back to the
/// pool when the body ends (or closes it when the body is abandoned, fails or is cancelled).
///
/// It is an `AsyncSequence` of byte chunks. Only one task may read at a time. If it is released before the
/// end, the connection is closed (a half-read HTTP/1.1 response cannot be reused).
public final class ResponseBodyReader: AsyncSequence, Sendable {
    public typealias Element = ArraySlice<UInt8>

    private struct State: ~Copyable {
        var connection: HTTP1Connection?
        var decoder: ContentDecoder?
        var metrics: RequestMetrics
        var trailers = HTTPHeaders()
        var finished = false
    }

    private let state: Mutex<State>
    private let pool: ConnectionPool
    private let deadline: ContinuousClock.Instant
    private let idle: Duration
    private let start: ContinuousClock.Instant
    private let url: HTTPURL

    init(
        connection: HTTP1Connection, pool: ConnectionPool, decoder: sending ContentDecoder?, deadline: ContinuousClock.Instant,
        idle: Duration, metrics: RequestMetrics, start: ContinuousClock.Instant, url: HTTPURL
    ) {
        self.state = Mutex(State(connection: connection, decoder: decoder, metrics: metrics))
        self.pool = pool
        self.deadline = deadline
        self.idle = idle
        self.start = start
        self.url = url
    }

    deinit {
        let connection = state.withLock { s -> HTTP1Connection? in
            defer { s.connection = nil }
            return s.connection
        }
        if let connection {
            connection.abandon()
            pool.release(connection, reusable: false)
        }
    }

    /// Bytes and timings so far; final once the body has ended.
    public var metrics: RequestMetrics { state.withLock { $0.metrics } }
    /// The trailer fields of a chunked body (after the end).
    public var trailers: HTTPHeaders { state.withLock { $0.trailers } }

    /// The next chunk of the body (decoded when the response was compressed), or nil at its end.
    public func nextChunk() async throws(CourierError) -> ArraySlice<UInt8>? {
        guard let connection = state.withLock({ $0.connection }) else {
            if state.withLock({ $0.finished }) { return nil }
            throw CourierError(.cancelled, "the body was abandoned", url: url.description)
        }
        do {
            while true {
                let event = try await connection.nextEvent(timeout: { try boundedTimeout(self.idle, deadline: self.deadline) })
                switch event {
                case .head:
                    continue
                case .body(let bytes):
                    if let decoder = state.withLock({ $0.decoder }) {
                        let decoded = try decoder.decode(bytes)
                        if decoded.isEmpty { continue }
                        return decoded[...]
                    }
                    return bytes
                case .trailers(let trailers):
                    state.withLock { $0.trailers = trailers }
                case .end:
                    if let decoder = state.withLock({ $0.decoder }) { try decoder.finish() }
                    finish(connection, reusable: connection.reusable)
                    return nil
                }
            }
        } catch {
            let received = connection.bytesReceived
            _ = connection.fail(.init(error))
            let metrics = state.withLock { s in
                s.metrics.bytesReceived += received
                s.connection = nil
                s.finished = true
                return s.metrics
            }
            pool.release(connection, reusable: false)
            var failure = CourierError.from(error, url: url.description, deadline: deadline, timeouts: nil)
            failure.bytesSent = metrics.bytesSent
            failure.bytesReceived = metrics.bytesReceived
            throw failure
        }
    }

    /// Stops reading: the connection is closed (it cannot be reused with a half-read response).
    public func cancel() {
        let connection = state.withLock { s -> HTTP1Connection? in
            defer {
                s.connection = nil
                s.finished = true
            }
            if let connection = s.connection { s.metrics.bytesReceived += connection.bytesReceived }
            return s.connection
        }
        if let connection {
            connection.abandon()
            pool.release(connection, reusable: false)
        }
    }

    private func finish(_ connection: HTTP1Connection, reusable: Bool) {
        state.withLock { s in
            s.metrics.bytesReceived += connection.bytesReceived
            s.metrics.total = ContinuousClock.now - start
            s.connection = nil
            s.finished = true
        }
        pool.release(connection, reusable: reusable)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let reader: ResponseBodyReader
        public mutating func next() async throws -> ArraySlice<UInt8>? { try await reader.nextChunk() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(reader: self) }
}
