package import CourierCore

/// Where a Redis server is and how to log in: `redis://[user:password@]host[:port][/db]`, or `rediss://` for TLS.
///
/// The host may be a name, an IPv4 address or a bracketed IPv6 address; the port defaults to 6379 and the
/// database to 0 (CourierCore's ``RedisEndpoint``, which reads a policy's URL, takes that part apart). The user and password are percent-decoded; `redis://:password@host` gives a password alone
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

    /// The server a policy's `coordination.redis` names, with the credentials the loader resolved for it.
    package init(endpoint: RedisEndpoint, username: String? = nil, password: String? = nil) {
        self.init(
            host: endpoint.host, port: endpoint.port, usesTLS: endpoint.usesTLS, username: username, password: password,
            database: endpoint.database)
    }

    /// Parses `text`: the user and password here, the rest as a policy's URL (``RedisEndpoint/parse(_:)``).
    ///
    /// - Throws: ``RedisError`` of kind ``RedisError/Kind-swift.enum/configuration`` saying what is wrong.
    package init(_ text: String) throws(RedisError) {
        func invalid(_ why: String) -> RedisError { RedisError(.configuration, "the URL \(URLUserinfo.redacted(text)) \(why)", backend: "(none)") }
        if text.contains("?") || text.contains("#") { throw invalid("has a query or fragment, which the client does not read") }
        var username: String?
        var password: String?
        var withoutUserinfo = text
        if let (authority, at) = URLUserinfo.range(in: text) {
            let userinfo = text[authority..<at]
            guard let colon = userinfo.firstIndex(of: ":") else { throw invalid("names a user without a password") }
            let user = userinfo[..<colon]
            guard let decodedUser = user.percentDecoded, let decodedPassword = userinfo[userinfo.index(after: colon)...].percentDecoded else {
                throw invalid("has a bad percent-escape in its user or password")
            }
            username = user.isEmpty ? nil : decodedUser
            password = decodedPassword
            withoutUserinfo = String(text[..<authority]) + String(text[text.index(after: at)...])
        }
        switch RedisEndpoint.parse(withoutUserinfo) {
        case .success(let endpoint): self.init(endpoint: endpoint, username: username, password: password)
        case .failure(let problem): throw invalid(problem.reason)
        }
    }

    /// Where the authority of `text` starts, and its last `@` when it has one.
    /// `host:port`, as errors name the backend (IPv6 in brackets).
    package var endpoint: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    package var description: String {
        let scheme = usesTLS ? "rediss" : "redis"
        let userinfo = password == nil ? "" : "\(username ?? ""):***@"
        return "\(scheme)://\(userinfo)\(endpoint)/\(database)"
    }
}
