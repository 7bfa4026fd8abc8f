/// One HTTP client under test. `get` fetches the URL, reads the whole body, and returns its length; it
/// throws for transport errors and for statuses other than 2xx.
protocol BenchClient: Sendable {
    func get() async throws -> Int
    func shutdown() async throws
    /// The executor the load generator's workers prefer (nil: the global concurrent executor). Courier's client
    /// offers one of its event loops when `COURIER_CALLER_ON_LOOP=1` (see `HTTPClient.eventLoopGroup`).
    var workerExecutor: (any TaskExecutor)? { get }
}

extension BenchClient {
    var workerExecutor: (any TaskExecutor)? { nil }
}

struct BadStatus: Error { var status: Int }
