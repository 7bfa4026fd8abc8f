// courier-load: http-bench's closed loop with Courier alone. It links CourierKit and the shared loop
// (BenchSupport), not AsyncHTTPClient, SwiftNIO or URLSession's Foundation, so its peak RSS is Courier's own
// rather than that of a binary which also loads the peers. Same arguments and JSON line as http-bench.
// `--client loader` sends every request through a DataLoader instead (CourierLoaderBenchClient).
import BenchSupport
import CourierBench

await loadGeneratorMain(tool: "courier-load", clients: ["courier", "loader"]) { options -> any BenchClient in
    if options.client == "loader" { return try CourierLoaderBenchClient(options: options) }
    return try CourierBenchClient(options: options)
}
