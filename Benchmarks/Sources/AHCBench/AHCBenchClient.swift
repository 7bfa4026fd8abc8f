import AsyncHTTPClient
import BenchSupport
import NIOCore
import NIOSSL

/// AsyncHTTPClient (`http-bench --client ahc`, `ahc-load`), configured like a careful user would: one shared client, a pool as wide as the
/// concurrency, bodies collected whole. With `--cacert` the CA is its only trust root (swift-nio-ssl, i.e.
/// BoringSSL, with full verification); with `--new-connection` it sends `Connection: close` on one shared
/// client, as Courier does. swift-nio-ssl keeps no client session cache, so it never resumes.
public struct AHCBenchClient: BenchClient {
    let client: HTTPClient
    let request: HTTPClientRequest

    public init(options: BenchOptions) throws {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = options.concurrency
        configuration.httpVersion = .http1Only
        configuration.decompression = .disabled
        if let ca = options.caCert {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .file(ca)
            configuration.tlsConfiguration = tls
        }
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        var request = HTTPClientRequest(url: options.url)
        if options.newConnection { request.headers.add(name: "Connection", value: "close") }
        self.request = request
    }

    public func get() async throws -> Fetched {
        let response = try await client.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 1 << 30)
        guard (200..<300).contains(Int(response.status.code)) else { throw BadStatus(status: Int(response.status.code)) }
        return Fetched(bytes: body.readableBytes)
    }

    public func shutdown() async throws { try await client.shutdown() }
}
