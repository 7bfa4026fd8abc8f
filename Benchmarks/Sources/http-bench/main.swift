// http-bench: a closed-loop HTTP load generator that drives Courier, AsyncHTTPClient or URLSession the same
// way (BenchSupport's loop), so their figures from one run can be compared as ratios. It stops by itself after
// --requests requests or --max-seconds, whichever comes first, and prints one JSON line. courier-load is the
// same loop with Courier alone, for peak RSS.
import AHCBench
import BenchSupport
import CourierBench

await loadGeneratorMain(tool: "http-bench", clients: ["courier", "ahc", "urlsession"]) { options in
    switch options.client {
    case "ahc": try AHCBenchClient(options: options)
    case "urlsession": try URLSessionBenchClient(options: options)
    default: try CourierBenchClient(options: options)
    }
}
