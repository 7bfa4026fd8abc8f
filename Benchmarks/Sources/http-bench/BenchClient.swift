/// One HTTP client under test. `get` fetches the URL, reads the whole body, and returns its length; it
/// throws for transport errors and for statuses other than 2xx.
protocol BenchClient: Sendable {
    func get() async throws -> Int
    func shutdown() async throws
}

struct BadStatus: Error { var status: Int }
