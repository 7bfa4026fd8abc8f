internal import CourierCore
internal import CourierPosix
internal import CourierTLS

extension Connector {
    /// A connection through `proxy`: TCP to the proxy (TLS to it too for an `https://` proxy, verified against its
    /// own name and `caFile`), then the tunnel to the connect target (`CONNECT` for https through an HTTP proxy,
    /// the SOCKS5 handshake for a SOCKS proxy), then TLS to the origin over the tunnel with the origin's SNI,
    /// verification and pins, exactly as without a proxy. Plain http through an HTTP proxy needs no tunnel: the
    /// requests go to the proxy in absolute form. Failures at the proxy hop are ``ProxyError``s; nothing here
    /// ever falls back to a direct connection.
    nonisolated(nonsending) func connect(
        _ key: PoolKey, through proxy: ProxyServer, tlsContext: TLSContext?, deadline: Deadline, on loop: EventLoop?
    ) async throws -> (any ByteStream, Setup) {
        let start = Deadline.now()
        let target = HostAddress.label(host: key.connectHost, port: key.connectPort)
        func failure(_ reason: ProxyError.Reason) -> ProxyError {
            ProxyError(proxy: proxy.description, target: target, reason: reason)
        }
        let addresses: [SocketAddress]
        if let literal = SocketAddress(ipAddress: proxy.host, port: proxy.port) {
            addresses = [literal]
        } else {
            do {
                addresses = try await resolver.resolve(host: proxy.host, port: proxy.port)
            } catch is ResolveError {
                throw failure(.unresolved)
            }
        }
        let resolved = Deadline.now()
        let tcp: TCPConnection
        do {
            tcp = try await TCPConnection.connect(to: addresses, deadline: deadline, on: loop ?? loops.next())
        } catch let error as ConnectionError where error.kind == .connectFailed || error.kind == .noAddresses {
            throw failure(.unreachable("\(error)"))
        }
        let connected = Deadline.now()
        var setup = Setup(dns: resolved - start, connect: connected - resolved, tls: nil)
        guard proxy.scheme == .https else {
            return try await tunnel(over: tcp, to: key, proxy: proxy, tlsContext: tlsContext, deadline: deadline, setup: &setup, failure: failure)
        }
        // An https:// proxy: TLS to it, verified against its own name and CA file, then everything inside that.
        let proxyTLS: TLSStream<TCPConnection>
        do {
            let engine = try TLSEngine(
                context: try await context(for: TLSPolicy(caFile: proxy.caFile)), serverName: proxy.host, port: proxy.port
            )
            proxyTLS = try await TLSStream.handshake(over: tcp, engine: engine, deadline: deadline, tracker: liveTLSStreams)
        } catch let error as TLSError {
            tcp.close()
            throw failure(.tls(error.message))
        } catch {
            tcp.close()
            throw error
        }
        return try await tunnel(over: proxyTLS, to: key, proxy: proxy, tlsContext: tlsContext, deadline: deadline, setup: &setup, failure: failure)
    }

    /// Opens the tunnel over the connection to the proxy when the request needs one (SOCKS, or https through an
    /// HTTP proxy), then TLS to the origin inside it for https. On failure the connection is closed.
    nonisolated(nonsending) private func tunnel<Transport: TLSTransport & ByteStream>(
        over stream: Transport, to key: PoolKey, proxy: ProxyServer, tlsContext: TLSContext?, deadline: Deadline,
        setup: inout Setup, failure: (ProxyError.Reason) -> ProxyError
    ) async throws -> (any ByteStream, Setup) {
        do {
            if proxy.scheme.isSOCKS {
                try await openSOCKS5Tunnel(on: stream, to: key, proxy: proxy, deadline: deadline, failure: failure)
            } else if key.tls != nil {
                try await openHTTPTunnel(on: stream, to: key, proxy: proxy, deadline: deadline, failure: failure)
            }
        } catch {
            stream.close()
            throw error
        }
        guard let tlsContext else { return (stream, setup) }
        let tunnelled = Deadline.now()
        let origin = try await originTLS(over: stream, key: key, context: tlsContext, deadline: deadline)
        setup.tls = Deadline.now() - tunnelled
        return (origin, setup)
    }

    /// Sends the `CONNECT` and reads the proxy's answer.
    nonisolated(nonsending) private func openHTTPTunnel(
        on stream: any ByteStream, to key: PoolKey, proxy: ProxyServer, deadline: Deadline,
        failure: (ProxyError.Reason) -> ProxyError
    ) async throws {
        var handshake = HTTPConnectHandshake(host: key.connectHost, port: key.connectPort, proxy: proxy)
        try await stream.write(handshake.request, deadline: deadline, idle: nil)
        while true {
            let bytes = try await stream.read(maxBytes: 16 * 1024, deadline: deadline, idle: nil)
            let step = bytes.isEmpty ? handshake.receivedEnd() : handshake.received(bytes)
            switch step {
            case .needMore: continue
            case .established(let leftover):
                guard leftover.isEmpty else { throw failure(.badAnswer("it sent bytes after its 2xx before the tunnel was used")) }
                return
            case .failed(let reason): throw failure(reason)
            }
        }
    }

    /// Runs the SOCKS5 handshake; `socks5://` resolves the target here (the first address), `socks5h://` hands
    /// the name to the proxy.
    nonisolated(nonsending) private func openSOCKS5Tunnel(
        on stream: any ByteStream, to key: PoolKey, proxy: ProxyServer, deadline: Deadline,
        failure: (ProxyError.Reason) -> ProxyError
    ) async throws {
        let target: SOCKS5Handshake.Target
        if let literal = SOCKS5Handshake.Target(ipAddress: key.connectHost) {
            target = literal
        } else if proxy.scheme == .socks5h {
            target = .name(key.connectHost)
        } else {
            let addresses = try await resolver.resolve(host: key.connectHost, port: key.connectPort)
            guard let first = addresses.first.flatMap({ SOCKS5Handshake.Target(ipAddress: $0.ipAddress) }) else {
                throw ResolveError(code: 0, message: "no address", host: key.connectHost)
            }
            target = first
        }
        var handshake = SOCKS5Handshake(target: target, port: key.connectPort, username: proxy.username, password: proxy.password)
        try await stream.write(handshake.greeting, deadline: deadline, idle: nil)
        while true {
            let bytes = try await stream.read(maxBytes: 1024, deadline: deadline, idle: nil)
            switch bytes.isEmpty ? handshake.receivedEnd() : handshake.received(bytes) {
            case .needMore: continue
            case .send(let reply): try await stream.write(reply, deadline: deadline, idle: nil)
            case .established(let leftover):
                guard leftover.isEmpty else { throw failure(.badAnswer("it sent bytes after its reply before the tunnel was used")) }
                return
            case .failed(let reason): throw failure(reason)
            }
        }
    }
}
