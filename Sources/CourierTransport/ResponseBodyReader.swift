public import CourierCore
internal import Synchronization

/// Reads a response body from its connection as the caller asks for it, and gives the connection back to the
/// pool when the body ends (or closes it when the body is abandoned, fails or is cancelled). The reading itself
/// is ``BodyReading``'s, the same code ``HTTPClient/execute(_:)`` collects whole bodies with.
///
/// It is an `AsyncSequence` of byte chunks. Only one task may read at a time. If it is released before the
/// end, the connection is closed (a half-read HTTP/1.1 response cannot be reused).
public final class ResponseBodyReader: AsyncSequence, Sendable {
    public typealias Element = ArraySlice<UInt8>

    private struct State: ~Copyable {
        /// nil while a read is in progress (the reading task holds it).
        var reading: BodyReading?
        /// The figures as of the last completed read.
        var metrics: RequestMetrics
        var trailers = HTTPHeaders()
        /// cancel() came while a read was in progress: the reading task closes the connection when it is back.
        var cancelRequested = false
    }

    private let state: Mutex<State>
    /// For closing the stream under a read in progress (closing is safe from any thread).
    private let stream: (any ByteStream)?
    private let url: HTTPURL

    init(_ reading: sending BodyReading) {
        let stream = reading.stream
        let metrics = reading.metrics
        self.url = reading.url
        self.stream = stream
        self.state = Mutex(State(reading: reading, metrics: metrics))
    }

    deinit {
        var reading = state.withLock { $0.reading.take() }
        reading?.cancel()
    }

    /// Bytes and timings so far; final once the body has ended.
    public var metrics: RequestMetrics { state.withLock { $0.metrics } }
    /// The trailer fields of a chunked body (after the end).
    public var trailers: HTTPHeaders { state.withLock { $0.trailers } }

    /// The next chunk of the body (decoded when the response was compressed), or nil at its end.
    public func nextChunk() async throws(CourierError) -> ArraySlice<UInt8>? {
        guard var reading = state.withLock({ $0.reading.take() }) else {
            throw CourierError(.cancelled, "the body is being read by another task", url: url.description)
        }
        let result: Result<ArraySlice<UInt8>?, CourierError>
        do throws(CourierError) {
            result = .success(try await reading.next())
        } catch {
            result = .failure(error)
        }
        put(back: &reading)
        return try result.get()
    }

    /// Reads and drops the rest of the body (up to 64 KiB, beyond which the connection is closed instead), so
    /// that the connection can carry another request; returns the final figures.
    public func drain() async -> RequestMetrics {
        guard var reading = state.withLock({ $0.reading.take() }) else { return metrics }
        await reading.drain()
        put(back: &reading)
        return metrics
    }

    /// Stops reading: the connection is closed (it cannot be reused with a half-read response).
    public func cancel() {
        let idle = state.withLock { s -> Bool in
            guard var reading = s.reading.take() else {
                s.cancelRequested = true
                return false
            }
            reading.cancel()
            s.metrics = reading.metrics
            s.reading = reading
            return true
        }
        // A read in progress: wake it (it fails) and let the reading task close the rest when it is back.
        if !idle { stream?.close() }
    }

    private func put(back reading: inout BodyReading) {
        state.withLock { s in
            if s.cancelRequested { reading.cancel() }
            s.metrics = reading.metrics
            s.trailers = reading.trailers
            s.reading = reading
        }
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let reader: ResponseBodyReader
        public mutating func next() async throws -> ArraySlice<UInt8>? { try await reader.nextChunk() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(reader: self) }
}
