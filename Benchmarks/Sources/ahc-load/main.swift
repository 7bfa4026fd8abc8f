// ahc-load: http-bench's closed loop with AsyncHTTPClient alone. It links the shared loop (BenchSupport) and
// AsyncHTTPClient (with SwiftNIO and swift-nio-ssl), not Courier or URLSession's Foundation, so its peak RSS is
// AsyncHTTPClient's own: the peer of courier-load's (issue 23). Same arguments and JSON line as http-bench.
import AHCBench
import BenchSupport

await loadGeneratorMain(tool: "ahc-load", clients: ["ahc"]) { options -> any BenchClient in
    try AHCBenchClient(options: options)
}
