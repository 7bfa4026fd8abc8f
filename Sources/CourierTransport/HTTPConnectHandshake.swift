internal import CourierCore
internal import CourierHTTP1

/// The HTTP `CONNECT` handshake that opens a tunnel through an HTTP proxy (RFC 9110 §9.3.6), as a pure machine:
/// ``request`` is what to send, ``received(_:)`` takes the proxy's bytes until its answer's head is complete,
/// which the HTTP/1.1 ``ResponseParser`` reads. A 2xx opens the tunnel; anything else is a ``ProxyError``.
///
/// The request names the URL's host as written (the proxy resolves it) and carries `Proxy-Authorization: Basic`
/// when the proxy has credentials: only here, never inside the tunnel, and never the origin's `Authorization`.
struct HTTPConnectHandshake: Sendable {
    enum Step: Equatable {
        /// The answer's head is not complete yet: read more.
        case needMore
        /// The tunnel is open; bytes after the head (none from a proxy that follows the protocol) belong to it.
        case established(leftover: [UInt8])
        case failed(ProxyError.Reason)
    }

    /// The `CONNECT` request's bytes.
    let request: [UInt8]
    private let proxy: ProxyServer
    private var buffer: [UInt8] = []
    /// The most a proxy's answer head may take (the parser's own limit is the same).
    private static let maxHeadBytes = 64 * 1024

    /// - Parameters:
    ///   - host: the origin's host as the URL has it (lower case, an IPv6 literal without brackets).
    init(host: String, port: Int, proxy: ProxyServer, userAgent: String? = nil) {
        self.proxy = proxy
        let authority = HostAddress.label(host: host, port: port)
        var text = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n"
        if let authorization = Self.authorization(for: proxy) { text += "Proxy-Authorization: \(authorization)\r\n" }
        if let userAgent, !userAgent.isEmpty { text += "User-Agent: \(userAgent)\r\n" }
        text += "\r\n"
        request = Array(text.utf8)
    }

    /// `Basic base64(user:password)` for a proxy with a user name; nil otherwise.
    static func authorization(for proxy: ProxyServer) -> String? {
        guard let username = proxy.username else { return nil }
        return "Basic " + Base64.encode(Array("\(username):\(proxy.password ?? "")".utf8))
    }

    /// Takes bytes from the proxy.
    mutating func received(_ bytes: some Collection<UInt8>) -> Step {
        buffer.append(contentsOf: bytes)
        guard let end = Self.endOfHead(in: buffer) else {
            return buffer.count > Self.maxHeadBytes ? .failed(.badAnswer("its answer's head is longer than 64 KiB")) : .needMore
        }
        var parser = ResponseParser(requestMethod: .connect)
        parser.feed(Array(buffer[..<end]))
        let head: HTTPResponseHead
        do {
            guard case .head(let parsed) = try parser.next() else {
                return .failed(.badAnswer("its answer has no status line"))
            }
            head = parsed
        } catch {
            return .failed(.badAnswer("its answer broke HTTP/1.1 (\(error))"))
        }
        switch head.status {
        case 200..<300:
            return .established(leftover: Array(buffer[end...]))
        case 407:
            let challenge = head.headers["proxy-authenticate"].map { String($0.split(separator: " ", maxSplits: 1).first ?? "") }
            return .failed(.authenticationRequired(scheme: challenge, hadCredentials: proxy.username != nil))
        default:
            return .failed(.tunnelRefused(status: head.status, reason: head.reason))
        }
    }

    /// The proxy closed the connection.
    func receivedEnd() -> Step {
        .failed(.badAnswer(buffer.isEmpty ? "it closed the connection without answering" : "it closed the connection mid-answer"))
    }

    /// The index just past the head's blank line, if it has arrived.
    private static func endOfHead(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        var i = 3
        while i < bytes.count {
            if bytes[i] == 10 {
                if bytes[i - 1] == 10 { return i + 1 }
                if bytes[i - 1] == 13, bytes[i - 2] == 10 { return i + 1 }
            }
            i += 1
        }
        return nil
    }
}
