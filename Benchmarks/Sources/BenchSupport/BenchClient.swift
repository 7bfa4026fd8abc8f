/// One HTTP client under test. `get` fetches the URL, reads the whole body, and returns what it got; it throws
/// for transport errors and for statuses other than 2xx.
public protocol BenchClient: Sendable {
    func get() async throws -> Fetched
    func shutdown() async throws
    /// The executor the load generator's workers prefer (nil: the global concurrent executor). Courier's client
    /// offers one of its event loops when `COURIER_CALLER_ON_LOOP=1` (see `HTTPClient.nextExecutor()`).
    var workerExecutor: (any TaskExecutor)? { get }
}

extension BenchClient {
    public var workerExecutor: (any TaskExecutor)? { nil }
}

/// What one request brought back.
public struct Fetched: Sendable {
    /// Body bytes.
    public var bytes: Int
    /// What the connection's TLS session negotiated, when the client tells (Courier does, through
    /// `RequestMetrics.tlsSession`; AsyncHTTPClient and URLSession do not).
    public var tls: TLSSummary?
    /// Whether the response came over a connection made for it; nil when the client does not tell.
    public var newConnection: Bool?

    public init(bytes: Int, tls: TLSSummary? = nil, newConnection: Bool? = nil) {
        self.bytes = bytes
        self.tls = tls
        self.newConnection = newConnection
    }
}

public struct TLSSummary: Sendable {
    public var version: String
    public var cipher: String
    public var resumed: Bool

    public init(version: String, cipher: String, resumed: Bool) {
        self.version = version
        self.cipher = cipher
        self.resumed = resumed
    }
}

public struct BadStatus: Error {
    public var status: Int
    public init(status: Int) { self.status = status }
}
