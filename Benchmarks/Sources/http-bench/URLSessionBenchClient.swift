import BenchSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// URLSession (on Linux, swift-corelibs-foundation over libcurl), one session with room for the concurrency.
struct URLSessionBenchClient: BenchClient {
    let session: URLSession
    let request: URLRequest

    init(options: BenchOptions) throws {
        if options.caCert != nil {
            throw UsageError(message: "--cacert is not supported with --client urlsession on Linux")
        }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = options.concurrency
        configuration.urlCache = nil
        session = URLSession(configuration: configuration)
        guard let url = URL(string: options.url) else { throw UsageError(message: "bad URL \(options.url)") }
        var request = URLRequest(url: url)
        if options.newConnection { request.setValue("close", forHTTPHeaderField: "Connection") }
        self.request = request
    }

    func get() async throws -> Fetched {
        let (data, response) = try await session.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else { throw BadStatus(status: status) }
        return Fetched(bytes: data.count)
    }

    func shutdown() async throws { session.finishTasksAndInvalidate() }
}
