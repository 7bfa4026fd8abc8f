import CourierKit
import CourierPosix
import Foundation

/// Courier's own transport, configured like the peers: a pool as wide as the concurrency, no decompression,
/// bodies collected whole.
struct CourierBenchClient: BenchClient {
    let client: HTTPClient
    let request: HTTPRequest

    init(options: BenchOptions) throws {
        if options.caCert != nil {
            throw UsageError(message: "--cacert needs Courier's TLS, which lands with the TLS issue")
        }
        guard let url = HTTPURL(options.url) else { throw UsageError(message: "bad URL \(options.url)") }
        var configuration = HTTPClientConfiguration()
        configuration.maxConnectionsPerHost = options.concurrency
        configuration.maxBodyBytes = 1 << 30
        configuration.userAgent = nil
        // COURIER_PIN=1 runs each request with an event loop as its executor (see HTTPClientConfiguration).
        let environment = ProcessInfo.processInfo.environment
        configuration.runsRequestsOnEventLoop = environment["COURIER_PIN"] == "1"
        let group: EventLoopGroup
        if let loops = environment["COURIER_LOOPS"].flatMap({ Int($0) }) {
            group = try EventLoopGroup(threads: loops)
        } else {
            group = .shared
        }
        client = HTTPClient(configuration: configuration, eventLoopGroup: group)
        var headers = HTTPHeaders()
        if options.newConnection { headers.add(name: "Connection", value: "close") }
        request = HTTPRequest(url: url, headers: headers, decompress: false)
    }

    /// With `COURIER_CALLER_ON_LOOP=1` the workers run on the client's event loops (`HTTPClient.eventLoopGroup`),
    /// and their requests with them: one thread does the whole exchange, with no hop between threads.
    var workerExecutor: (any TaskExecutor)? {
        ProcessInfo.processInfo.environment["COURIER_CALLER_ON_LOOP"] == "1" ? client.eventLoopGroup.next() : nil
    }

    func get() async throws -> Int {
        let response = try await client.execute(request)
        guard (200..<300).contains(response.status) else { throw BadStatus(status: response.status) }
        return response.body.count
    }

    func shutdown() async throws { client.shutdown() }
}
