import BenchSupport
import CourierKit

/// The data loader over Courier's transport (`courier-load --client loader`): every request goes through a
/// `DataLoaderService` whose policy claims the URL's host (the built-in retry curve, no rate limit or
/// authoriser), so the figures include the loader's routing, state machine, trace events and instrumentation.
/// The transport is configured as ``CourierBenchClient``'s (its loops are the shared ones). `COURIER_INSTRUMENTS=memory` gives the service real
/// in-memory backends instead of the no-op defaults (``LoaderBenchInstruments``).
public struct CourierLoaderBenchClient: BenchClient {
    let client: HTTPClient
    let service: DataLoaderService
    let loader: DataLoader
    let url: String

    public init(options: BenchOptions) throws {
        guard let url = HTTPURL(options.url) else { throw UsageError(message: "bad URL \(options.url)") }
        let policy = """
            version: 1
            services:
              bench: { hosts: ["\(url.host)"], scheme: \(url.scheme) }
            """
        let compilation = PolicyCompiler().compile(source: policy, path: "loader-bench.yaml")
        guard let graph = compilation.graph, !compilation.hasErrors else {
            throw UsageError(message: "the benchmark's policy does not compile: \(compilation.diagnostics)")
        }
        client = HTTPClient(configuration: CourierBenchClient.configuration(options))
        service = LoaderBenchInstruments.makeService(
            graph: graph, client: client,
            instrumented: ["memory", "null"].contains(environment("COURIER_INSTRUMENTS") ?? "none")
        )
        loader = service.makeFactory().makeLoader()
        self.url = options.url
    }

    public func get() async throws -> Fetched {
        let response = try await loader.load(Request(url: url))
        TracerBeside.afterRequest()
        guard response.isSuccess else { throw BadStatus(status: response.status) }
        return Fetched(bytes: response.body.count, tls: nil, newConnection: response.timeline.connect != nil)
    }

    public func shutdown() async throws { client.shutdown() }
}
