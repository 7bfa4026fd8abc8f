internal import CourierCore

/// `tls.client-certificate`, `tls.client-key`, `tls.client-key-password` (mutual TLS) and a service's
/// `connect-to: unix:/path`.
extension PolicyFileParser {
    /// The longest socket path a `sockaddr_un` holds on Linux (108 bytes with the terminating NUL).
    static let maxUnixSocketPathLength = 107

    mutating func parseClientIdentity(_ key: String, _ value: Int, into layer: inout PolicyLayer) {
        let path = "tls.\(key)"
        guard let (text, _) = scalar(value), !isNull(value), !text.isEmpty else {
            report(.wrongType, key == "client-key-password" ? "\(path) must be a string such as \"${env:CLIENT_KEY_PASSWORD}\"" : "\(path) must be a file path", at: value)
            return
        }
        if key == "client-key-password" {
            guard let secret = references(text, at: value) else { return }
            if let literal = secret.literalValue, !literal.isEmpty { reportLiteralSecret(path, name: "client-key-password", at: value) }
            layer.set(path, .secret(secret), at: location(value))
            return
        }
        let absolute = PolicyFileSystem.absolute(PolicyFileSystem.resolve(text, from: self.path))
        guard SystemCall.isRegularFile(absolute) else {
            report(.clientCertificateMissing, "\(path) '\(text.abbreviated)' does not exist (looked for \(absolute.abbreviated(to: 1024)))", at: value,
                   suggestion: "the path is relative to the file that says it")
            return
        }
        if key == "client-key", let mode = SystemCall.permissions(absolute), mode & 0o077 != 0 {
            report(.clientKeyReadable, "\(path) '\(text.abbreviated)' can be read by other users (mode \(String(mode, radix: 8)))", at: value,
                   suggestion: "chmod 600 \(absolute.abbreviated(to: 1024))")
        }
        layer.set(path, .string(absolute), at: location(value))
    }

    /// `connect-to: unix:/path`, the path relative to this file as every path in a policy is.
    mutating func parseConnectTo(_ value: Int, into layer: inout PolicyLayer) {
        guard let (text, _) = scalar(value), !isNull(value) else {
            report(.invalidConnectTo, "connect-to must be 'unix:' followed by a socket path", at: value, suggestion: "e.g. connect-to: unix:/run/docker.sock")
            return
        }
        guard text.hasPrefix("unix:"), text.count > 5 else {
            report(.invalidConnectTo, "connect-to '\(text.abbreviated)' is not 'unix:' followed by a socket path (the only form Courier supports)", at: value,
                   suggestion: "e.g. connect-to: unix:/run/docker.sock; for another host, use fallbacks")
            return
        }
        let socket = PolicyFileSystem.absolute(PolicyFileSystem.resolve(String(text.dropFirst(5)), from: self.path))
        guard socket.utf8.count <= Self.maxUnixSocketPathLength, !socket.utf8.contains(0) else {
            report(.invalidConnectTo, "the socket path of connect-to is \(socket.utf8.count) bytes long; a Unix socket's path holds at most \(Self.maxUnixSocketPathLength)", at: value,
                   suggestion: "use a shorter path (a symbolic link to the socket's folder works)")
            return
        }
        layer.set("connect-to", .string(socket), at: location(value))
    }
}
