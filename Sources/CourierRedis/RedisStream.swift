internal import CourierCore
internal import CourierPosix

/// The bytes under a Redis connection: a TCP socket, or a TLS session over one (``RedisTLSStream``). A
/// connection has one reader (its reply loop) and one writer at a time (the pipeline's), never two of either.
protocol RedisStream: AnyObject, Sendable {
    /// Up to `maxBytes`; empty at end of stream. No deadline: the connection's timer closes a hung stream.
    nonisolated(nonsending) func read(maxBytes: Int) async throws -> [UInt8]
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
    nonisolated(nonsending) func read(maxBytes: Int) async throws -> [UInt8] {
        try await read(maxBytes: maxBytes, deadline: nil)
    }

    nonisolated(nonsending) func write(_ bytes: [UInt8], deadline: Deadline?) async throws {
        try await write(bytes, deadline: deadline, idle: nil)
    }

    func writeNow(_ bytes: [UInt8]) -> Int {
        sendNow(bytes)
    }
}
