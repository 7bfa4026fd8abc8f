internal import CourierCore

/// Where a Redis server is and how to log in: `redis://[user:password@]host[:port][/db]`, or `rediss://` for TLS.
///
/// The host may be a name, an IPv4 address or a bracketed IPv6 address; the port defaults to 6379 and the
/// database to 0. The user and password are percent-decoded; `redis://:password@host` gives a password alone
/// (`AUTH password`), `redis://user:password@host` an ACL user (`AUTH user password`). A query or fragment is
/// refused rather than ignored. The description hides the password.
package struct RedisURL: Sendable, Equatable, CustomStringConvertible {
    package var host: String
    package var port: Int
    /// `rediss://`: TLS.
    package var usesTLS: Bool
    package var username: String?
    package var password: String?
    package var database: Int

    package init(host: String, port: Int = 6379, usesTLS: Bool = false, username: String? = nil, password: String? = nil, database: Int = 0) {
        self.host = host
        self.port = port
        self.usesTLS = usesTLS
        self.username = username
        self.password = password
        self.database = database
    }

    /// Parses `text`.
    ///
    /// - Throws: ``RedisError`` of kind ``RedisError/Kind-swift.enum/configuration`` saying what is wrong.
    package init(_ text: String) throws(RedisError) {
        func invalid(_ why: String) -> RedisError { RedisError(.configuration, "the URL \(Self.redacted(text)) \(why)", backend: "(none)") }
        var rest: Substring
        if text.hasPrefix("redis://") {
            usesTLS = false
            rest = text.dropFirst(8)
        } else if text.hasPrefix("rediss://") {
            usesTLS = true
            rest = text.dropFirst(9)
        } else {
            throw invalid("is not redis:// or rediss://")
        }
        if rest.contains("?") || rest.contains("#") { throw invalid("has a query or fragment, which the client does not read") }
        var path: Substring = ""
        if let slash = rest.firstIndex(of: "/") {
            path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        username = nil
        password = nil
        if let at = rest.lastIndex(of: "@") {
            let userinfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            guard let colon = userinfo.firstIndex(of: ":") else { throw invalid("names a user without a password") }
            let user = userinfo[..<colon]
            guard let decodedUser = Self.percentDecoded(user), let decodedPassword = Self.percentDecoded(userinfo[userinfo.index(after: colon)...]) else {
                throw invalid("has a bad percent-escape in its user or password")
            }
            username = user.isEmpty ? nil : decodedUser
            password = decodedPassword
        }
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw invalid("has an unclosed IPv6 bracket") }
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            guard IPv6Literal.isValid(host) else { throw invalid("has brackets around something that is not an IPv6 address") }
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw invalid("has text after its IPv6 address") }
                portText = after.dropFirst()
            }
        } else if let colon = rest.firstIndex(of: ":") {
            host = String(rest[..<colon])
            portText = rest[rest.index(after: colon)...]
        } else {
            host = String(rest)
        }
        guard !host.isEmpty, !host.contains(where: { $0 == " " || $0 == "/" || $0 == "@" }) else { throw invalid("has no usable host") }
        if let portText {
            guard let number = Int(portText), (1...65535).contains(number), portText.allSatisfy(\.isASCII) else {
                throw invalid("has an invalid port")
            }
            port = number
        } else {
            port = 6379
        }
        if path.isEmpty {
            database = 0
        } else {
            guard let number = Int(path), number >= 0, path.allSatisfy(\.isASCII) else { throw invalid("has an invalid database number") }
            database = number
        }
    }

    /// `host:port`, as errors name the backend (IPv6 in brackets).
    package var endpoint: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    package var description: String {
        let scheme = usesTLS ? "rediss" : "redis"
        let userinfo = password == nil ? "" : "\(username ?? ""):***@"
        return "\(scheme)://\(userinfo)\(endpoint)/\(database)"
    }

    /// `text` with anything between `://` and the last `@` of the authority replaced, for error messages.
    private static func redacted(_ text: String) -> String {
        guard let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://") else { return text }
        let authorityStart = text.index(colon, offsetBy: 3)
        let authorityEnd = text[authorityStart...].firstIndex(of: "/") ?? text.endIndex
        guard let at = text[authorityStart..<authorityEnd].lastIndex(of: "@") else { return text }
        return String(text[..<authorityStart]) + "***" + String(text[at...])
    }

    private static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next(), let low = iterator.next() else { return nil }
            let pair = String(decoding: [high, low], as: UTF8.self)
            guard pair.allSatisfy(\.isHexDigit), let value = UInt8(pair, radix: 16) else { return nil }
            bytes.append(value)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
