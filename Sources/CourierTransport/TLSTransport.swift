internal import CourierCore
internal import CourierPosix

/// What a ``TLSStream`` moves its ciphertext over: a ``TCPConnection``, or another ``TLSStream`` (TLS to the origin
/// inside TLS to an `https://` proxy). The stream's socket-level needs: waiting reads and writes with the request's
/// deadline, and the non-blocking look at an idle connection the pool's probe makes.
protocol TLSTransport: AnyObject, Sendable {
    nonisolated(nonsending) func write(_ bytes: [UInt8], deadline: Deadline?, idle: Duration?) async throws
    /// Reads into `buffer`; 0 at the end of the stream.
    nonisolated(nonsending) func read(into buffer: UnsafeMutableRawBufferPointer, deadline: Deadline?, idle: Duration?) async throws -> Int
    func isQuietSinceLastRead() -> Bool
    /// What is readable now without waiting: nil when nothing is, empty at the end of the stream.
    func receiveNow(maxBytes: Int) throws -> [UInt8]?
    /// Sends what the buffer takes now without waiting; the count sent.
    func sendNow(_ bytes: [UInt8]) -> Int
    /// Closes, sending `bytes` first if the buffer takes them now.
    func close(sendingLast bytes: [UInt8])
    func close()
    /// The peer's address as `-v` shows it (the socket's, through any TLS layers), nil when unknown.
    var peerAddress: String? { get }
}

extension TCPConnection: TLSTransport {}
