/// Where the fleet's Redis server is: `coordination.redis.url` (`redis://host[:port][/db]`, or `rediss://` for
/// TLS), checked and taken apart.
///
/// The policy compiler checks the URL with ``parse(_:)`` and the graph keeps the parts, so the loader connects
/// without parsing it again and `courier explain` names the backend. A URL never carries a credential: one with
/// a user or a password in it is refused (the policy says them with `username:` and `password:`, where a
/// password is a secret reference), so the URL may be printed anywhere.
package struct RedisEndpoint: Hashable, Sendable, CustomStringConvertible {
    /// The host name (lower case) or address literal, an IPv6 address without its brackets.
    package var host: String
    /// The port; 6379 when the URL names none.
    package var port: Int
    /// The database `SELECT`ed after connecting; 0 when the URL names none.
    package var database: Int
    /// `rediss://`: the connection is TLS.
    package var usesTLS: Bool

    package static let defaultPort = 6379

    package init(host: String, port: Int = RedisEndpoint.defaultPort, database: Int = 0, usesTLS: Bool = false) {
        self.host = host
        self.port = port
        self.database = database
        self.usesTLS = usesTLS
    }

    /// Why a URL is refused: a reason that completes "the Redis URL …" and, where there is one, how to fix it.
    /// Neither repeats a user or password the URL held.
    package struct Problem: Error, Hashable, Sendable {
        package var reason: String
        package var suggestion: String?

        package init(_ reason: String, suggestion: String? = nil) {
            self.reason = reason
            self.suggestion = suggestion
        }
    }

    /// The URL's parts, or why it is refused: the scheme is `redis` or `rediss` (lower case), the host a name,
    /// an IPv4 address or a bracketed IPv6 address, the port 1-65535, the database a non-negative number, and
    /// there is no user, password, query or fragment.
    package static func parse(_ text: String) -> Result<RedisEndpoint, Problem> {
        let usesTLS: Bool
        var rest: Substring
        if text.hasPrefix("redis://") {
            usesTLS = false
            rest = text.dropFirst(8)
        } else if text.hasPrefix("rediss://") {
            usesTLS = true
            rest = text.dropFirst(9)
        } else {
            let scheme = text.firstIndex(of: ":").map { String(text[..<$0]) }
            return .failure(Problem(
                scheme.map { "has the scheme '\($0.prefix(20))', not redis or rediss" } ?? "does not start with redis:// or rediss://",
                suggestion: "write redis://host:6379/0, or rediss:// for TLS"))
        }
        if rest.contains("?") || rest.contains("#") {
            return .failure(Problem("has a query or fragment, which Courier does not read", suggestion: "remove everything from '?' or '#'"))
        }
        var path: Substring = ""
        if let slash = rest.firstIndex(of: "/") {
            path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        if let at = rest.lastIndex(of: "@") {
            if rest[..<at].contains(":") {
                return .failure(Problem(
                    "holds a password, and a policy never holds one in clear",
                    suggestion: "remove it from the URL and write 'password: \"${env:REDIS_PASSWORD}\"' under redis (and 'username:' for an ACL user)"))
            }
            return .failure(Problem("names a user", suggestion: "remove it from the URL and write 'username:' under redis"))
        }
        guard !rest.isEmpty else { return .failure(Problem("names no host", suggestion: "write redis://host:6379/0")) }
        var hostText = rest
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return .failure(Problem("has an unclosed '[' around its host")) }
            hostText = rest[...close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return .failure(Problem("has text after its IPv6 address")) }
                portText = after.dropFirst()
            }
        } else if rest.utf8.count(where: { $0 == UInt8(ascii: ":") }) > 1 {
            return .failure(Problem("has an IPv6 address without brackets", suggestion: "write it in brackets: redis://[::1]:6379/0"))
        } else if let colon = rest.firstIndex(of: ":") {
            hostText = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        }
        // HostAddress reads names, IPv4 and bracketed IPv6 as fallback lists do; a port is checked below.
        guard !hostText.isEmpty, let address = HostAddress.parse(String(hostText)), address.port == nil else {
            return .failure(Problem("has no valid host", suggestion: "write a host name, an IPv4 address or an IPv6 address in brackets"))
        }
        var port = defaultPort
        if let portText {
            guard let number = decimal(portText), (1...65535).contains(number) else {
                return .failure(Problem("has the port '\(portText.prefix(20))', not a number from 1 to 65535"))
            }
            port = number
        }
        var database = 0
        if !path.isEmpty {
            guard let number = decimal(path) else {
                return .failure(Problem("has the database '\(path.prefix(20))', not a non-negative number", suggestion: "write /0 for the first database, or leave it out"))
            }
            database = number
        }
        return .success(RedisEndpoint(host: address.host, port: port, database: database, usesTLS: usesTLS))
    }

    /// ASCII digits only (no sign, no spaces) that fit an `Int`.
    private static func decimal(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        return Int(text)
    }

    /// `host:port/db`, an IPv6 address in brackets.
    package var address: String { HostAddress.label(host: host, port: port) + "/\(database)" }

    /// The URL without anything the policy did not say: `redis://host:port/db` or `rediss://…`.
    package var description: String { (usesTLS ? "rediss://" : "redis://") + address }
}
