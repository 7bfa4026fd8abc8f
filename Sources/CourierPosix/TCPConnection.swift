internal import CCourierPosix
internal import Glibc
package import CourierCore

/// A connected, non-blocking TCP socket with async reads and writes.
///
/// Reads and writes try the system call directly on the calling thread and park on the event loop only when
/// the socket would block, so a read that finds data waiting, or a write the kernel buffers at once, costs
/// one system call and no thread hop.
///
/// One read and one write may run at the same time (from different tasks); a second concurrent read (or
/// write) fails with ``ConnectionError/Kind-swift.enum/concurrentOperation``. **Any error thrown by a read or
/// write closes the connection**: a system-call error, a timeout, cancellation of the waiting task
/// (`CancellationError`), or a concurrent ``close()``. Calling ``close()`` again is harmless.
package final class TCPConnection: Sendable, CustomStringConvertible {
    let channel: IOChannel
    /// The local end, e.g. `127.0.0.1:50312`.
    package let localAddress: SocketAddress
    /// The peer, e.g. `127.0.0.1:8080`.
    package let remoteAddress: SocketAddress

    /// Wraps a connected channel. Sets `TCP_NODELAY` on a TCP socket: HTTP writes whole messages, so Nagle only
    /// adds latency (a Unix domain socket has no Nagle).
    init(channel: IOChannel, remoteAddress: SocketAddress?) throws {
        self.channel = channel
        do {
            let addresses = try channel.withDescriptor { fd throws -> (SocketAddress?, SocketAddress?) in
                if remoteAddress?.family != .unix {
                    try Syscall.setIntOption(fd, level: Int32(IPPROTO_TCP), name: TCP_NODELAY, value: 1)
                }
                let local = try Syscall.localAddress(fd)
                let remote = try remoteAddress ?? Syscall.remoteAddress(fd)
                return (local, remote)
            }
            guard let addresses, let local = addresses.0, let remote = addresses.1 else {
                throw ConnectionError.closed
            }
            self.localAddress = local
            self.remoteAddress = remote
        } catch {
            channel.close(reason: error)
            throw error
        }
    }

    deinit {
        // The event loop's registration keeps the channel alive, so an unclosed connection would hold its
        // descriptor forever: flag the bug in debug builds and close it anyway.
        if channel.isOpen {
            assertionFailure("TCPConnection \(remoteAddress) was released without close(); closing it")
            channel.close()
        }
    }

    /// The loop that delivers this connection's readiness events and timers.
    package var eventLoop: EventLoop { channel.loop }

    /// False once ``close()`` ran or an error closed the connection.
    package var isOpen: Bool { channel.isOpen }

    // MARK: - Connecting

    /// Connects to the first address that answers, racing them with Happy Eyeballs (RFC 8305): IPv6 and IPv4
    /// interleaved with IPv6 first, the next attempt started 250 ms after the previous one or as soon as it
    /// fails; the first to connect wins and the others are closed.
    ///
    /// - Parameters:
    ///   - addresses: candidates, e.g. from ``Resolver/resolve(host:port:)``.
    ///   - timeout: for the whole race.
    ///   - loop: the loop the connection will use.
    /// - Throws: ``ConnectionError`` (`connectFailed` listing each address's failure, `connectTimeout`,
    ///   `noAddresses`) or `CancellationError`; nothing is left open.
    package static func connect(
        to addresses: [SocketAddress],
        timeout: Duration = .seconds(10),
        on loop: EventLoop
    ) async throws -> TCPConnection {
        try await connect(to: addresses, deadline: .now() + timeout, on: loop)
    }

    /// ``connect(to:timeout:on:)-(SocketAddress...)`` with an absolute deadline for the whole race.
    package static func connect(
        to addresses: [SocketAddress],
        deadline: Deadline,
        on loop: EventLoop
    ) async throws -> TCPConnection {
        let connector = HappyEyeballsConnector(addresses: addresses, deadline: deadline, loop: loop)
        return try await connector.connect()
    }

    /// Connects to the Unix domain socket at `path` (a stream socket: a local daemon's API, a sidecar).
    ///
    /// - Throws: ``ConnectionError`` (`connectFailed` naming the path and the reason, e.g. `ENOENT` for a path
    ///   that does not exist, `ECONNREFUSED` for a socket no one listens on; `connectTimeout`; `noAddresses` for a
    ///   path no socket address can hold) or `CancellationError`; nothing is left open.
    package static func connect(unixSocket path: String, deadline: Deadline, on loop: EventLoop) async throws -> TCPConnection {
        guard let address = SocketAddress(unixPath: path) else { throw ConnectionError.noAddresses }
        return try await connect(to: [address], deadline: deadline, on: loop)
    }

    /// Connects to one address.
    package static func connect(
        to address: SocketAddress,
        timeout: Duration = .seconds(10),
        on loop: EventLoop
    ) async throws -> TCPConnection {
        try await connect(to: [address], timeout: timeout, on: loop)
    }

    /// Resolves `host` (an IP literal is used as is) and connects with ``connect(to:timeout:on:)-(SocketAddress...)``.
    ///
    /// `timeout` bounds the TCP part; the lookup is bounded by the system resolver's own timeouts, and
    /// whatever time it used is deducted from `timeout`.
    ///
    /// - Throws: ``ResolveError``, ``ConnectionError`` or `CancellationError`.
    package static func connect(
        host: String,
        port: Int,
        timeout: Duration = .seconds(10),
        resolver: Resolver = .shared,
        on loop: EventLoop
    ) async throws -> TCPConnection {
        let start = Deadline.now()
        let addresses = try await resolver.resolve(host: host, port: port)
        let remaining = timeout - (Deadline.now() - start)
        return try await connect(to: addresses, timeout: max(remaining, .zero), on: loop)
    }

    // MARK: - Reading

    /// Reads up to `maxBytes` bytes, waiting until at least one is available.
    ///
    /// - Parameters:
    ///   - maxBytes: upper bound for one call (at least 1).
    ///   - timeout: longest wait for the first byte; nil waits forever. On expiry the connection is closed
    ///     and ``ConnectionError/Kind-swift.enum/readTimeout`` is thrown.
    /// - Returns: the bytes read; empty at end of file (the peer closed its side).
    nonisolated(nonsending) package func read(maxBytes: Int = 64 * 1024, timeout: Duration? = nil) async throws -> [UInt8] {
        try await read(maxBytes: maxBytes, deadline: timeout.map { .now() + $0 })
    }

    /// Reads up to `maxBytes` bytes, waiting until at least one is available or `deadline` passes (then the
    /// connection is closed and ``ConnectionError/Kind-swift.enum/readTimeout`` is thrown); nil waits forever.
    /// The deadline is absolute: a read that parks several times still ends by it.
    nonisolated(nonsending) package func read(maxBytes: Int = 64 * 1024, deadline: Deadline?, idle: Duration? = nil) async throws -> [UInt8] {
        precondition(maxBytes > 0, "maxBytes must be positive")
        if maxBytes <= 16 * 1024 {
            return try await channel.perform(.read, deadline: deadline, idle: idle, drained: { !$0.isEmpty && $0.count < maxBytes }) { fd throws(SystemCallError) -> IOResult<[UInt8]> in
                var outcome: Result<IOResult<[UInt8]>, SystemCallError> = .success(.wouldBlock)
                withUnsafeTemporaryAllocation(byteCount: maxBytes, alignment: 1) { buffer in
                    outcome = Result { () throws(SystemCallError) -> IOResult<[UInt8]> in
                        switch try Syscall.recv(fd, into: buffer) {
                        case .wouldBlock: return .wouldBlock
                        case .processed(let count): return .processed(Array(buffer[0..<count]))
                        }
                    }
                }
                return try outcome.get()
            }
        }
        return try await channel.perform(.read, deadline: deadline, idle: idle, drained: { !$0.isEmpty && $0.count < maxBytes }) { fd throws(SystemCallError) -> IOResult<[UInt8]> in
            var failure: SystemCallError?
            var wouldBlock = false
            let bytes = [UInt8](unsafeUninitializedCapacity: maxBytes) { buffer, initialized in
                do throws(SystemCallError) {
                    switch try Syscall.recv(fd, into: UnsafeMutableRawBufferPointer(buffer)) {
                    case .wouldBlock: wouldBlock = true
                    case .processed(let count): initialized = count
                    }
                } catch {
                    failure = error
                }
            }
            if let failure { throw failure }
            return wouldBlock ? .wouldBlock : .processed(bytes)
        }
    }

    /// Reads into `buffer`, waiting until at least one byte is available.
    ///
    /// The buffer must stay valid until the call returns. - Returns: the number of bytes read; 0 at end of
    /// file. - Parameter timeout: as for ``read(maxBytes:timeout:)``.
    nonisolated(nonsending) package func read(into buffer: UnsafeMutableRawBufferPointer, timeout: Duration? = nil) async throws -> Int {
        try await read(into: buffer, deadline: timeout.map { .now() + $0 })
    }

    /// ``read(into:timeout:)-(UnsafeMutableRawBufferPointer,_)`` with an absolute deadline (nil waits forever).
    nonisolated(nonsending) package func read(into buffer: UnsafeMutableRawBufferPointer, deadline: Deadline?, idle: Duration? = nil) async throws -> Int {
        precondition(buffer.count > 0, "the buffer must not be empty")
        return try await channel.perform(.read, deadline: deadline, idle: idle, drained: { $0 > 0 && $0 < buffer.count }) { fd throws(SystemCallError) in
            try Syscall.recv(fd, into: buffer)
        }
    }

    /// Reads into `bytes[offset...]` (at most what fits there), waiting until at least one byte is available:
    /// a body whose size is known goes from the socket straight into its final array, with no intermediate
    /// buffer or copy.
    ///
    /// - Returns: the number of bytes read; 0 at end of file. - Parameter timeout: as for
    ///   ``read(maxBytes:timeout:)``.
    nonisolated(nonsending) package func read(into bytes: inout [UInt8], at offset: Int, timeout: Duration? = nil) async throws -> Int {
        try await read(into: &bytes, at: offset, deadline: timeout.map { .now() + $0 })
    }

    /// ``read(into:at:timeout:)`` with an absolute deadline (nil waits forever).
    nonisolated(nonsending) package func read(into bytes: inout [UInt8], at offset: Int, deadline: Deadline?, idle: Duration? = nil) async throws -> Int {
        precondition(offset >= 0 && offset < bytes.count, "the offset must leave room in the array")
        let room = bytes.count - offset
        return try await channel.perform(.read, deadline: deadline, idle: idle, drained: { $0 > 0 && $0 < room }) { fd throws(SystemCallError) in
            var outcome: Result<IOResult<Int>, SystemCallError> = .success(.wouldBlock)
            bytes.withUnsafeMutableBytes { raw in
                outcome = Result { () throws(SystemCallError) in
                    try Syscall.recv(fd, into: UnsafeMutableRawBufferPointer(rebasing: raw[offset...]))
                }
            }
            return try outcome.get()
        }
    }

    // MARK: - Writing

    /// Writes all of `bytes`, waiting for buffer space (EPOLLOUT) only when the socket would block.
    ///
    /// - Parameter timeout: longest wait for buffer space; nil waits forever. On expiry the connection is
    ///   closed and ``ConnectionError/Kind-swift.enum/writeTimeout`` is thrown.
    nonisolated(nonsending) package func write(_ bytes: [UInt8], timeout: Duration? = nil) async throws {
        try await write(bytes[...], deadline: timeout.map { .now() + $0 })
    }

    /// Writes all of `bytes` by `deadline` (nil waits forever); see ``write(_:timeout:)-([UInt8],_)``.
    nonisolated(nonsending) package func write(_ bytes: [UInt8], deadline: Deadline?, idle: Duration? = nil) async throws {
        try await write(bytes[...], deadline: deadline, idle: idle)
    }

    /// Writes all of `bytes`; see ``write(_:timeout:)-([UInt8],_)``.
    nonisolated(nonsending) package func write(_ bytes: ArraySlice<UInt8>, timeout: Duration? = nil) async throws {
        try await write(bytes, deadline: timeout.map { .now() + $0 })
    }

    /// Writes all of `bytes` by `deadline` (nil waits forever).
    nonisolated(nonsending) package func write(_ bytes: ArraySlice<UInt8>, deadline: Deadline?, idle: Duration? = nil) async throws {
        guard !bytes.isEmpty else { return }
        var offset = 0
        try await channel.perform(.write, deadline: deadline, idle: idle) { fd throws(SystemCallError) -> IOResult<Void> in
            while offset < bytes.count {
                var sent: Result<IOResult<Int>, SystemCallError> = .success(.wouldBlock)
                bytes.withUnsafeBytes { raw in
                    sent = Result { () throws(SystemCallError) in
                        try Syscall.send(fd, UnsafeRawBufferPointer(rebasing: raw[offset...]))
                    }
                }
                switch try sent.get() {
                case .wouldBlock: return .wouldBlock
                case .processed(let count): offset += count
                }
            }
            return .processed(())
        }
    }

    /// Writes several buffers in order with as few system calls as possible (`sendmsg` with up to 64
    /// buffers per call), e.g. a request head and its body without concatenating them first.
    ///
    /// - Parameter timeout: as for ``write(_:timeout:)-([UInt8],_)``.
    nonisolated(nonsending) package func write(vectored buffers: [[UInt8]], timeout: Duration? = nil) async throws {
        let buffers = buffers.filter { !$0.isEmpty }
        guard !buffers.isEmpty else { return }
        var index = 0
        var offset = 0
        try await channel.perform(.write, deadline: timeout.map { .now() + $0 }) { fd throws(SystemCallError) -> IOResult<Void> in
            while index < buffers.count {
                let sent = try Self.withIOVecs(buffers, from: index, offset: offset) { iovecs throws(SystemCallError) in
                    try Syscall.sendVectored(fd, iovecs)
                }
                guard case .processed(var count) = sent else { return .wouldBlock }
                while count > 0 {
                    let remaining = buffers[index].count - offset
                    if count >= remaining {
                        count -= remaining
                        index += 1
                        offset = 0
                    } else {
                        offset += count
                        count = 0
                    }
                }
            }
            return .processed(())
        }
    }

    /// Pins up to 64 buffers starting at `buffers[start]` (skipping `offset` bytes of the first) and
    /// hands their `iovec`s to `body`.
    private static func withIOVecs<R>(
        _ buffers: [[UInt8]],
        from start: Int,
        offset: Int,
        _ body: (UnsafeMutableBufferPointer<iovec>) throws(SystemCallError) -> R
    ) throws(SystemCallError) -> R {
        let end = min(buffers.count, start + 64)
        return try withUnsafeTemporaryAllocation(of: iovec.self, capacity: end - start) { iovecs throws(SystemCallError) -> R in
            func pin(_ index: Int) throws(SystemCallError) -> R {
                if index == end { return try body(iovecs) }
                var result: Result<R, SystemCallError>!
                buffers[index].withUnsafeBytes { raw in
                    let skip = index == start ? offset : 0
                    iovecs[index - start] = iovec(
                        iov_base: UnsafeMutableRawPointer(mutating: raw.baseAddress! + skip),
                        iov_len: raw.count - skip
                    )
                    result = Result { () throws(SystemCallError) in try pin(index + 1) }
                }
                return try result.get()
            }
            return try pin(start)
        }
    }

    // MARK: - State

    /// True when the peer closed or reset the connection (or it is closed locally), checked without
    /// blocking and without consuming data (`recv` with `MSG_PEEK | MSG_DONTWAIT`).
    ///
    /// A connection pool calls it before reusing an idle connection. Unread bytes waiting on an idle
    /// connection do not count as closed; see ``hasPendingInput()``.
    package func isClosedByPeer() -> Bool {
        peek() == .closed
    }

    /// True when the connection is known to be open with nothing waiting, without a system call: no byte and no
    /// hang-up has arrived since a read last emptied the receive buffer. A connection pool checks this first and
    /// peeks (``isClosedByPeer()``, ``hasPendingInput()``) only when it is false.
    package func isQuietSinceLastRead() -> Bool {
        channel.isQuietSinceLastDrain
    }

    /// True when bytes are waiting to be read (on an idle HTTP connection that means the server sent
    /// something unsolicited, and the connection should not be reused).
    package func hasPendingInput() -> Bool {
        peek() == .pendingInput
    }

    /// Reads what is waiting now, without parking: nil when nothing is (the read would block), empty at end of
    /// file. For probing an idle connection whose bytes must be looked at, not only peeked (a TLS session's
    /// post-handshake messages). Errors close nothing: the caller decides.
    package func receiveNow(maxBytes: Int = 16 * 1024) throws -> [UInt8]? {
        let outcome = try channel.withDescriptor { fd throws -> [UInt8]? in
            var wouldBlock = false
            let bytes = try [UInt8](unsafeUninitializedCapacity: maxBytes) { buffer, initialized in
                switch try Syscall.recv(fd, into: UnsafeMutableRawBufferPointer(buffer), flags: Int32(MSG_DONTWAIT)) {
                case .wouldBlock: wouldBlock = true
                case .processed(let count): initialized = count
                }
            }
            return wouldBlock ? nil : bytes
        }
        guard let outcome else { throw ConnectionError.closed }
        return outcome
    }

    /// Hands every read to `handler` as bytes arrive, with no task: on the loop thread at each readiness edge
    /// (the first call runs on the caller's), until `handler` returns false, the bytes are empty (end of file) or
    /// a read fails (`.failure`, also when the connection is closed). A connection with one reader that reacts to
    /// what arrives (Redis's replies) resumes its waiting callers straight from the loop, one thread hop fewer than
    /// a reader task the loop would wake first. The connection has no other reader while this runs.
    package func receiveContinuously(
        maxBytes: Int = 64 * 1024, _ handler: @escaping @Sendable (Result<[UInt8], any Error>) -> Bool
    ) {
        precondition(maxBytes > 0, "maxBytes must be positive")
        while true {
            let epoch = channel.currentEpoch(.read)
            let bytes: [UInt8]
            do {
                guard let received = try receiveNow(maxBytes: maxBytes) else {
                    let parked = channel.awaitReadable(since: epoch) { [self] readiness in
                        switch readiness {
                        case .success: receiveContinuously(maxBytes: maxBytes, handler)
                        case .failure(let error): _ = handler(.failure(error))
                        }
                    }
                    if parked { return }
                    continue
                }
                bytes = received
            } catch {
                _ = handler(.failure(error))
                return
            }
            guard handler(.success(bytes)), !bytes.isEmpty else { return }
        }
    }

    /// Sends what the socket takes now, without parking; returns the number of bytes sent (0 when it would
    /// block). For a best-effort goodbye (a TLS `close_notify`) as the connection closes.
    @discardableResult
    package func sendNow(_ bytes: [UInt8]) -> Int {
        guard !bytes.isEmpty else { return 0 }
        let sent = channel.withDescriptor { fd -> Int in
            let outcome = try? bytes.withUnsafeBytes { try Syscall.send(fd, $0) }
            if case .processed(let count)? = outcome { return count }
            return 0
        }
        return sent ?? 0
    }

    private enum PeekResult { case open, pendingInput, closed }

    private func peek() -> PeekResult {
        let result = channel.withDescriptor { fd -> PeekResult in
            var byte: UInt8 = 0
            do {
                let outcome = try withUnsafeMutableBytes(of: &byte) {
                    try Syscall.recv(fd, into: $0, flags: Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
                }
                switch outcome {
                case .wouldBlock: return .open
                case .processed(0): return .closed
                case .processed: return .pendingInput
                }
            } catch {
                return .closed
            }
        }
        return result ?? .closed
    }

    /// Closes the socket now. Parked reads and writes resume with ``ConnectionError/closed``.
    package func close() {
        channel.close()
    }

    /// Closes the connection, sending `lastBytes` first (best effort, never waiting; a TLS `close_notify`) once the
    /// socket has left the event loop, so that a reset from a peer that already closed wakes no one.
    package func close(sendingLast lastBytes: [UInt8]) {
        channel.close(sendingLast: lastBytes)
    }

    /// Times a read or write parked waiting for readiness (for tests and diagnostics).
    var parkCount: Int { channel.parkCount }

    /// Sets `SO_SNDBUF` (tests use a small buffer to force writes to wait for EPOLLOUT).
    func setSendBufferSize(_ bytes: Int32) throws {
        try channel.withDescriptor { fd in
            try Syscall.setIntOption(fd, level: SOL_SOCKET, name: SO_SNDBUF, value: bytes)
        }
    }

    /// Sets `SO_RCVBUF`.
    func setReceiveBufferSize(_ bytes: Int32) throws {
        try channel.withDescriptor { fd in
            try Syscall.setIntOption(fd, level: SOL_SOCKET, name: SO_RCVBUF, value: bytes)
        }
    }

    package var description: String {
        "TCPConnection(\(localAddress) -> \(remoteAddress)\(isOpen ? "" : ", closed"))"
    }
}
