internal import CourierCrypto
internal import CourierCore
internal import CourierTransport
internal import CourierHTTP1

/// Fetches URLs straight on one ``HTTPClient`` (no `--policy`): curl-like, with no retries, the body streamed
/// to its destination as it arrives.
struct DirectFetcher: URLFetcher {
    let client: HTTPClient
    let template: FetchRequestTemplate
    /// Draw a progress bar on standard error (when it is a terminal) for long downloads.
    let showsProgress: Bool
    /// `-v`: one line on standard error when each request starts and ends.
    let verbose: Bool

    func fetch(_ url: HTTPURL, index: Int, into output: BodyWriter) async -> FetchOutcome {
        var timeouts = TimeoutPolicy.builtIn
        if let maxTime = template.maxTime { timeouts.total = maxTime }
        var request = HTTPRequest(
            method: template.method, url: url, headers: template.headers, body: template.body.map { .bytes($0) } ?? .none,
            timeouts: timeouts, decompress: template.decompress
        )
        request.proxySelection = template.proxySelection
        if verbose { StandardError.write("#\(index + 1) \(template.method) \(url)") }
        let start = ContinuousClock.now
        var response: StreamingResponse?
        var hasher = SHA256()
        var bodyBytes = 0
        do {
            let r = try await client.stream(request)
            response = r
            if verbose, let session = r.body.metrics.tlsSession { TLSSessionDescription.write(session, index: index) }
            let failed = template.fails(r.status)
            if template.includeHead && !failed {
                output.write(FetchRequestTemplate.head(status: r.status, reason: r.head.reason, headers: r.headers))
            }
            let progress = showsProgress ? ProgressBar(expectedBytes: r.headers["content-length"].flatMap { Int($0) }) : nil
            while let chunk = try await r.body.nextChunk() {
                hasher.update(chunk)
                bodyBytes += chunk.count
                progress?.advance(by: chunk.count)
                if !failed { output.write(chunk) }
            }
            progress?.finish()
            if verbose { StandardError.write("#\(index + 1) done: status \(r.status)") }
            var outcome = FetchOutcome(
                report: FetchReport(
                    url: url.description, response: r, bodyBytes: bodyBytes, digest: hasher.finalize(),
                    metrics: r.body.metrics, total: ContinuousClock.now - start, error: nil
                ),
                exitStatus: FetchExitCode.success, end: template.end(for: r.status)
            )
            if failed {
                outcome.messages.append("courier fetch: the server answered \(r.status) (\(url))")
                outcome.exitStatus = FetchExitCode.httpError
            }
            return outcome
        } catch {
            if verbose { StandardError.write("#\(index + 1) failed: \(error.kind): \(error.message)") }
            return FetchOutcome(
                report: FetchReport(
                    url: url.description, response: response, bodyBytes: bodyBytes, digest: nil,
                    metrics: response?.body.metrics ?? RequestMetrics(), total: ContinuousClock.now - start, error: error
                ),
                exitStatus: FetchExitCode.code(for: error.kind), end: .failed,
                messages: ["courier fetch: \(error)"]
            )
        }
    }
}
