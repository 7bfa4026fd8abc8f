package import CourierCore
internal import CourierPosix
package import CourierTLS

/// The byte pipe an HTTP/1.1 connection runs over: a plain TCP connection, or a TLS session over one
/// (``TLSStream``). Everything above this protocol (pool, codec, client) is the same for both.
package protocol ByteStream: AnyObject, Sendable {
    /// Reads up to `maxBytes`; empty at end of stream. Throws when its wait ends first (closing the stream) or on
    /// failure. `deadline` is absolute: the request's, carried down unchanged (nil: no deadline); `idle` bounds
    /// each wait for the socket from its start; the channel under it ends the wait at whichever comes first.
    nonisolated(nonsending) func read(maxBytes: Int, deadline: Deadline?, idle: Duration?) async throws -> [UInt8]
    /// Reads into `bytes[offset...]` (at most what fits there); 0 at end of stream. Throws as `read(maxBytes:)`.
    nonisolated(nonsending) func read(into bytes: inout [UInt8], at offset: Int, deadline: Deadline?, idle: Duration?) async throws -> Int
    /// Writes all of `bytes` within `deadline` and `idle`, as `read(maxBytes:)`.
    nonisolated(nonsending) func write(_ bytes: [UInt8], deadline: Deadline?, idle: Duration?) async throws
    /// Whether the stream is known, without a system call, to be open with nothing waiting (false = unknown).
    func isQuietSinceLastRead() -> Bool
    /// Whether the peer closed the stream while it was idle (checked without blocking or consuming data).
    func isClosedByPeer() -> Bool
    /// Whether unread bytes are waiting (on an idle HTTP/1.1 connection: unsolicited data, not reusable).
    func hasPendingInput() -> Bool
    /// Closes now; pending reads and writes fail.
    func close()
    /// What the TLS handshake negotiated; nil for a plain connection.
    var tlsInfo: TLSSessionInfo? { get }
    /// The address the stream is connected to (`127.0.0.1:8443`, `[::1]:80`), for ``ExchangeObserver``s; nil
    /// when it cannot say.
    var peerAddress: String? { get }
}

extension ByteStream {
    package var peerAddress: String? { nil }
}

extension TCPConnection: ByteStream {
    package var tlsInfo: TLSSessionInfo? { nil }
    package var peerAddress: String? { remoteAddress.description }
}
