/// How long a request may take: to connect, between bytes, and in all (every attempt and back-off included).
public struct TimeoutPolicy: Hashable, Sendable {
    /// Time allowed to establish a connection (DNS, TCP and TLS handshakes), per attempt.
    public var connect: Duration
    /// Longest silence while waiting for response bytes.
    public var idle: Duration
    /// Deadline for the whole request from the moment it is started, retries and back-off included.
    public var total: Duration

    public init(connect: Duration, idle: Duration, total: Duration) {
        self.connect = connect
        self.idle = idle
        self.total = total
    }

    /// Built-in defaults: connect 10 s, idle 30 s, total 60 s.
    public static let builtIn = TimeoutPolicy(connect: .seconds(10), idle: .seconds(30), total: .seconds(60))
}
