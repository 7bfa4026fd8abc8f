internal import CCourierPosix
internal import Glibc
internal import CourierCore

/// A listening TCP socket with async `accept`, for tests and local demo servers.
package final class TCPListener: Sendable, CustomStringConvertible {
    private let channel: IOChannel
    /// The bound address; with port 0 this holds the port the kernel chose.
    package let localAddress: SocketAddress

    private init(channel: IOChannel, localAddress: SocketAddress) {
        self.channel = channel
        self.localAddress = localAddress
    }

    deinit {
        if channel.isOpen {
            assertionFailure("TCPListener \(localAddress) was released without close(); closing it")
            channel.close()
        }
    }

    /// Binds and listens on `host` (an IP literal such as `127.0.0.1` or `::1`) and `port` (0: any free port).
    ///
    /// `SO_REUSEADDR` is set; an IPv6 listener is IPv6-only. `receiveBufferSize` sets `SO_RCVBUF` before
    /// `listen`, so accepted sockets inherit it (tests use it to make a peer slow).
    ///
    /// - Throws: ``SystemCallError`` (`bind` with `EADDRINUSE`, `EADDRNOTAVAIL` when the address is not
    ///   configured, ...) or ``ResolveError`` when `host` is not an IP literal.
    package static func bind(
        host: String = "127.0.0.1",
        port: Int = 0,
        backlog: Int32 = 128,
        receiveBufferSize: Int32? = nil,
        on loop: EventLoop
    ) throws -> TCPListener {
        guard let address = SocketAddress(ipAddress: host, port: port) else {
            throw ResolveError.invalidHost(host, reason: "a listener needs an IP literal and a port in 0...65535")
        }
        let descriptor = FileDescriptor(takingOwnershipOf: try Syscall.socket(domain: address.domain, type: Int32(SOCK_STREAM.rawValue)))
        do {
            let fd = descriptor.rawValue
            try Syscall.setIntOption(fd, level: SOL_SOCKET, name: SO_REUSEADDR, value: 1)
            if address.family == .ipv6 {
                try Syscall.setIntOption(fd, level: Int32(IPPROTO_IPV6), name: IPV6_V6ONLY, value: 1)
            }
            if let receiveBufferSize {
                try Syscall.setIntOption(fd, level: SOL_SOCKET, name: SO_RCVBUF, value: receiveBufferSize)
            }
            try Syscall.bind(fd, to: address)
            try Syscall.listen(fd, backlog: backlog)
            guard let bound = try Syscall.localAddress(fd) else { throw SystemCallError(call: "getsockname", errno: EAFNOSUPPORT) }
            let channel = try IOChannel.register(descriptor, on: loop, interest: .read)
            return TCPListener(channel: channel, localAddress: bound)
        } catch {
            descriptor.close()
            throw error
        }
    }

    /// Waits for the next connection.
    ///
    /// - Parameters:
    ///   - timeout: longest wait; nil waits forever. On expiry the listener is closed.
    ///   - loop: the loop for the accepted connection; nil uses the listener's.
    /// - Throws: ``SystemCallError``, ``ConnectionError`` (closed, timeout) or `CancellationError`; any of
    ///   them except a failure to set up the accepted socket closes the listener.
    package func accept(timeout: Duration? = nil, on loop: EventLoop? = nil) async throws -> TCPConnection {
        let fd = try await channel.perform(.read, deadline: timeout.map { .now() + $0 }) { fd throws(SystemCallError) in
            try Syscall.accept(fd)
        }
        let descriptor = FileDescriptor(takingOwnershipOf: fd)
        let accepted = try IOChannel.register(descriptor, on: loop ?? channel.loop, interest: .readWrite)
        return try TCPConnection(channel: accepted, remoteAddress: nil)
    }

    /// Stops listening; a pending ``accept(timeout:on:)`` resumes with ``ConnectionError/closed``.
    package func close() {
        channel.close()
    }

    /// False once closed.
    package var isOpen: Bool { channel.isOpen }

    package var description: String { "TCPListener(\(localAddress))" }
}
