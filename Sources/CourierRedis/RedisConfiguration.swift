package import CourierCore

/// How a ``RedisClient`` connects and how long it waits.
package struct RedisConfiguration: Sendable {
    /// Where the server is, the credentials and the database.
    package var url: RedisURL
    /// For `rediss://`: verification, CA file, pins, minimum version (as for https).
    package var tls: TLSPolicy
    /// Bounds the connection's set-up: TCP connect, TLS handshake, `AUTH`, `SELECT` and a `PING`. A probe of a
    /// hung server ends by it.
    package var connectTimeout: Duration
    /// The deadline a command gets when its caller gives none (the default: 50 ms).
    package var commandTimeout: Duration
    /// The waits between reconnection attempts while the server is unreachable.
    package var reconnect: BackoffPolicy
    /// Bounds on the replies the parser accepts.
    package var parserLimits: RESPParser.Limits

    package init(
        url: RedisURL,
        tls: TLSPolicy = .builtIn,
        connectTimeout: Duration = .seconds(1),
        commandTimeout: Duration = .milliseconds(50),
        reconnect: BackoffPolicy = RedisConnectivityStateMachine.reconnectBackoff,
        parserLimits: RESPParser.Limits = .init()
    ) {
        self.url = url
        self.tls = tls
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
        self.reconnect = reconnect
        self.parserLimits = parserLimits
    }
}
