import BenchSupport
import CourierCore
import CourierKit
import CourierTransport
import CourierPosix

#if canImport(Glibc)
import Glibc
#endif

/// Courier's own transport, configured like the peers: a pool as wide as the concurrency, no decompression,
/// bodies collected whole. With `--cacert` it trusts that CA alone (`TLSPolicy(caFile:)`), with full
/// verification. With `--new-connection` it sends `Connection: close`: the same client (pool, TLS context and
/// session cache) serves every request, as AsyncHTTPClient's does, so a server that issues tickets sees them
/// used, and one that does not sees full handshakes.
public struct CourierBenchClient: BenchClient {
    let client: HTTPClient
    let request: HTTPRequest

    public init(options: BenchOptions) throws {
        guard let url = HTTPURL(options.url) else { throw UsageError(message: "bad URL \(options.url)") }
        // COURIER_LOOPS=N runs N loops of the client's own instead of the shared ones.
        if let loops = environment("COURIER_LOOPS").flatMap({ Int($0) }) {
            client = try HTTPClient(configuration: Self.configuration(options), eventLoopThreads: loops)
        } else {
            client = HTTPClient(configuration: Self.configuration(options))
        }
        var headers = HTTPHeaders()
        if options.newConnection { headers.add(name: "Connection", value: "close") }
        var request = HTTPRequest(url: url, headers: headers, decompress: false)
        // COURIER_PROXY=URL sends every request through that proxy (run-proxy.sh: HTTPS through a CONNECT tunnel).
        if let proxy = environment("COURIER_PROXY") { request.proxy = try ProxyServer.parse(proxy) }
        self.request = request
    }

    /// The transport's configuration for `options` (also ``CourierLoaderBenchClient``'s).
    public static func configuration(_ options: BenchOptions) -> HTTPClientConfiguration {
        var configuration = HTTPClientConfiguration()
        configuration.maxConnectionsPerHost = options.concurrency
        // COURIER_CONNECTIONS=N caps the pool below the concurrency, so requests queue for a connection (the pool's
        // wait queue on the hot path; collections-bench, issue 11).
        if let connections = environment("COURIER_CONNECTIONS").flatMap({ Int($0) }) {
            configuration.maxConnectionsPerHost = connections
        }
        configuration.maxBodyBytes = 1 << 30
        configuration.userAgent = nil
        if let ca = options.caCert {
            // TLSPolicy wants an absolute path.
            configuration.tls = TLSPolicy(caFile: ca.hasPrefix("/") ? ca : currentDirectory() + "/" + ca)
        }
        // COURIER_PIN=1 runs each request with an event loop as its executor (see HTTPClientConfiguration).
        configuration.runsRequestsOnEventLoop = environment("COURIER_PIN") == "1"
        return configuration
    }

    /// With `COURIER_CALLER_ON_LOOP=1` the workers run on the client's event loops (`HTTPClient.nextExecutor()`),
    /// and their requests with them: one thread does the whole exchange, with no hop between threads.
    public var workerExecutor: (any TaskExecutor)? {
        environment("COURIER_CALLER_ON_LOOP") == "1" ? client.nextExecutor() : nil
    }

    public func get() async throws -> Fetched {
        let response = try await client.execute(request)
        TracerBeside.afterRequest()
        guard (200..<300).contains(response.status) else { throw BadStatus(status: response.status) }
        let metrics = response.metrics
        return Fetched(
            bytes: response.body.count,
            tls: metrics.tlsSession.map { TLSSummary(version: $0.version, cipher: $0.cipher, resumed: $0.resumed) },
            newConnection: !metrics.reusedConnection
        )
    }

    public func shutdown() async throws { client.shutdown() }
}

/// The working directory, without Foundation.
private func currentDirectory() -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    guard getcwd(&buffer, buffer.count) != nil else { return "." }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
