internal import CourierCore
internal import CourierPosix

/// The bytes under a Redis connection: a TCP socket, or a TLS session over one (``RedisTLSStream``). A
/// connection has one reader (its reply handler) and one writer at a time (the pipeline's), never two of either.
protocol RedisStream: AnyObject, Sendable {
    /// Hands what arrives to `handler` (on the event loop's thread, with no task in between) until it returns
    /// false, the stream ends (empty bytes) or fails (`.failure`, also after ``close()``). No deadline: the
    /// connection's timer closes a hung stream.
    func receiveContinuously(_ handler: @escaping @Sendable (Result<[UInt8], any Error>) -> Bool)
    /// All of `bytes`, by `deadline`.
    nonisolated(nonsending) func write(_ bytes: [UInt8], deadline: Deadline?) async throws
    /// What the stream takes of `bytes` now, without waiting: the count written (0 when it would block, or when
    /// the stream cannot write without waiting, as a TLS session; a failure is left to ``write(_:deadline:)``,
    /// which the caller makes for the rest).
    func writeNow(_ bytes: [UInt8]) -> Int
    /// Closes now; a parked read or write fails.
    func close()
}

extension TCPConnection: RedisStream {
    func receiveContinuously(_ handler: @escaping @Sendable (Result<[UInt8], any Error>) -> Bool) {
        receiveContinuously(maxBytes: 64 * 1024, handler)
    }

    nonisolated(nonsending) func write(_ bytes: [UInt8], deadline: Deadline?) async throws {
        try await write(bytes, deadline: deadline, idle: nil)
    }

    func writeNow(_ bytes: [UInt8]) -> Int {
        sendNow(bytes)
    }
}
