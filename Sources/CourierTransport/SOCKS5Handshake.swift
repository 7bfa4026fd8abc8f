internal import Glibc

/// The SOCKS5 handshake (RFC 1928) with optional username/password authentication (RFC 1929), as a pure
/// machine: send ``greeting``, then feed the proxy's bytes to ``received(_:)`` and do what each step says, until
/// the tunnel is open (a `CONNECT` to the target, whose address the proxy resolves when it is a name) or refused.
struct SOCKS5Handshake: Sendable {
    /// Where the tunnel goes: an address (4 or 16 bytes), or a name the proxy resolves (`socks5h://`).
    enum Target: Equatable, Sendable {
        case address([UInt8])
        case name(String)

        /// The address of an IPv4 or IPv6 literal (no brackets); nil for anything else.
        init?(ipAddress text: String) {
            let isV6 = text.utf8.contains(UInt8(ascii: ":"))
            var bytes = [UInt8](repeating: 0, count: isV6 ? 16 : 4)
            let parsed = bytes.withUnsafeMutableBytes { inet_pton(isV6 ? AF_INET6 : AF_INET, text, $0.baseAddress) }
            guard parsed == 1 else { return nil }
            self = .address(bytes)
        }
    }

    enum Step: Equatable {
        case needMore
        /// Send these bytes, then read more.
        case send([UInt8])
        /// The tunnel is open; bytes after the reply belong to it.
        case established(leftover: [UInt8])
        case failed(ProxyError.Reason)
    }

    private enum Phase { case method, authentication, reply, open, failed }

    private let target: Target
    private let port: Int
    private let username: String?
    private let password: String?
    private var phase = Phase.method
    private var buffer: [UInt8] = []

    init(target: Target, port: Int, username: String?, password: String?) {
        self.target = target
        self.port = port
        self.username = username
        self.password = password
    }

    /// The client's greeting: no authentication, and username/password when there are credentials.
    var greeting: [UInt8] { username == nil ? [5, 1, 0] : [5, 2, 0, 2] }

    /// The proxy's bytes.
    mutating func received(_ bytes: some Collection<UInt8>) -> Step {
        buffer.append(contentsOf: bytes)
        switch phase {
        case .method:
            guard buffer.count >= 2 else { return .needMore }
            guard buffer[0] == 5 else { return fail(.badAnswer("it does not speak SOCKS5 (version byte \(buffer[0]))")) }
            let method = buffer[1]
            buffer.removeFirst(2)
            switch method {
            case 0:
                phase = .reply
                return .send(connectRequest())
            case 2 where username != nil:
                phase = .authentication
                return .send(authenticationRequest())
            case 0xFF:
                let offered = username == nil ? "no authentication" : "no authentication or a username and password"
                return fail(.socksAuthentication("accepts none of the methods offered (\(offered))"))
            default:
                return fail(.badAnswer("it chose authentication method \(method), which was not offered"))
            }
        case .authentication:
            guard buffer.count >= 2 else { return .needMore }
            let status = buffer[1]
            buffer.removeFirst(2)
            guard status == 0 else { return fail(.socksAuthentication("refused the username and password (status \(status))")) }
            phase = .reply
            return .send(connectRequest())
        case .reply:
            guard buffer.count >= 5 else { return .needMore }
            guard buffer[0] == 5 else { return fail(.badAnswer("its reply has version byte \(buffer[0])")) }
            guard buffer[1] == 0 else { return fail(.socksRefused(code: buffer[1])) }
            let addressLength: Int
            switch buffer[3] {
            case 1: addressLength = 4
            case 4: addressLength = 16
            case 3: addressLength = 1 + Int(buffer[4])
            default: return fail(.badAnswer("its reply has address type \(buffer[3])"))
            }
            let length = 4 + addressLength + 2
            guard buffer.count >= length else { return .needMore }
            phase = .open
            return .established(leftover: Array(buffer[length...]))
        case .open, .failed:
            return .failed(.badAnswer("bytes after the handshake ended"))
        }
    }

    /// The proxy closed the connection.
    func receivedEnd() -> Step {
        .failed(.badAnswer("it closed the connection during the SOCKS5 handshake"))
    }

    private mutating func fail(_ reason: ProxyError.Reason) -> Step {
        phase = .failed
        return .failed(reason)
    }

    /// RFC 1929: version 1, the username and the password, each with its length (at most 255 bytes; longer ones
    /// are cut, and the proxy refuses them).
    private func authenticationRequest() -> [UInt8] {
        let user = Array((username ?? "").utf8.prefix(255))
        let pass = Array((password ?? "").utf8.prefix(255))
        return [1, UInt8(user.count)] + user + [UInt8(pass.count)] + pass
    }

    /// RFC 1928 §4: CONNECT to the target.
    private func connectRequest() -> [UInt8] {
        var bytes: [UInt8] = [5, 1, 0]
        switch target {
        case .address(let address):
            bytes.append(address.count == 4 ? 1 : 4)
            bytes += address
        case .name(let name):
            let utf8 = Array(name.utf8.prefix(255))
            bytes += [3, UInt8(utf8.count)] + utf8
        }
        bytes += [UInt8(truncatingIfNeeded: port >> 8), UInt8(truncatingIfNeeded: port)]
        return bytes
    }

    /// RFC 1928 §6's name of a reply code.
    static func replyName(_ code: UInt8) -> String {
        switch code {
        case 1: return "general SOCKS server failure"
        case 2: return "connection not allowed by ruleset"
        case 3: return "network unreachable"
        case 4: return "host unreachable"
        case 5: return "connection refused"
        case 6: return "TTL expired"
        case 7: return "command not supported"
        case 8: return "address type not supported"
        default: return "unassigned reply code"
        }
    }
}
