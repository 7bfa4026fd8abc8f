import BenchSupport
import CourierCore
import CourierKit
import CourierTransport
import CourierPolicy


/// The data loader over Courier's transport (`courier-load --client loader`): every request goes through a
/// `DataLoaderService` whose policy claims the URL's host (the built-in retry curve, a rate limit that cannot
/// bind, no authoriser), so the figures include the loader's routing, rate limiter, state machine, trace events
/// and instrumentation.
/// The transport is configured as ``CourierBenchClient``'s (its loops are the shared ones). `COURIER_INSTRUMENTS=memory` gives the service real
/// in-memory backends instead of the no-op defaults (``LoaderBenchInstruments``).
public struct CourierLoaderBenchClient: BenchClient {
    let client: HTTPClient
    let loader: DataLoader
    let url: String

    public init(options: BenchOptions) throws {
        client = HTTPClient(configuration: CourierBenchClient.configuration(options))
        loader = try Self.makeLoader(url: options.url, client: client, mode: .fromEnvironment)
        self.url = options.url
    }

    /// A loader over `client` whose policy claims `url`'s host, with the instruments of `mode`. The rate limit is
    /// the policy language's largest (1,000,000 requests per second, as many at once): every request passes the
    /// limiter's bucket, none ever waits, as issue 23's loader goals assume.
    public static func makeLoader(
        url: String, client: HTTPClient, mode: LoaderBenchInstruments.Mode
    ) throws -> DataLoader {
        guard let parsed = HTTPURL(url) else { throw UsageError(message: "bad URL \(url)") }
        // COURIER_FLEET_REDIS=redis://…: the same limit with `scope: fleet`, shared through that Redis (issue 24's
        // fleet-limited load against the process-limited one).
        let fleet = environment("COURIER_FLEET_REDIS")
        let coordination = fleet.map { "coordination:\n  redis: { url: \"\($0)\", key-prefix: \"courier:bench:\" }\n" } ?? ""
        let policy = """
            version: 1
            \(coordination)services:
              bench:
                hosts: ["\(parsed.host)"]
                scheme: \(parsed.scheme)
                rate-limit: { requests-per-second: 1000000, burst: 1000000\(fleet == nil ? "" : ", scope: fleet") }
            """
        let compilation = PolicyCompiler().compile(source: policy, path: "loader-bench.yaml")
        guard let graph = compilation.graph, !compilation.hasErrors else {
            throw UsageError(message: "the benchmark's policy does not compile: \(compilation.diagnostics)")
        }
        // The factory and the service live as long as a loader of theirs.
        return LoaderBenchInstruments.makeService(graph: graph, client: client, mode: mode).makeFactory().makeLoader()
    }

    public func get() async throws -> Fetched {
        let response = try await loader.load(Request(url: url))
        TracerBeside.afterRequest()
        guard response.isSuccess else { throw BadStatus(status: response.status) }
        return Fetched(bytes: response.body.count, tls: nil, newConnection: response.timeline.connect != nil)
    }

    public func shutdown() async throws { client.shutdown() }
}
