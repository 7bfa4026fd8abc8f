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
    /// `-v`: the error of a failed request as a `*` line (the client's ``VerboseObserver`` shows the rest).
    let verbose: Bool

    func fetch(_ url: HTTPURL, index: Int, into output: BodyWriter) async -> FetchOutcome {
        var timeouts = TimeoutPolicy.builtIn
        if let maxTime = template.maxTime { timeouts.total = maxTime }
        let offset = template.resumeOffset(into: output)
        var request = HTTPRequest(
            method: template.method, url: url, headers: template.headers(from: offset), body: template.transportBody,
            timeouts: timeouts, decompress: template.decompress
        )
        request.unixSocketPath = template.unixSocket(at: index)
        request.proxySelection = template.proxySelection
        let start = ContinuousClock.now
        var response: StreamingResponse?
        var hasher = SHA256()
        var bodyBytes = 0
        do {
            let r = try await client.stream(request)
            response = r
            let failed = template.fails(r.status) && !(offset > 0 && r.status == 416)
            if offset > 0, !failed, let verdict = FetchResume.verdict(offset: offset, r.status, r.headers) {
                r.body.cancel()
                let report = FetchReport(
                    url: url.description, response: r, bodyBytes: 0, digest: hasher.finalize(), metrics: r.body.metrics,
                    total: ContinuousClock.now - start, error: nil
                )
                return FetchResume.outcome(verdict, report: report)
            }
            if template.includeHead && !failed {
                output.write(FetchRequestTemplate.head(version: r.head.version.description, status: r.status, reason: r.head.reason, headers: r.headers))
            }
            let progress = showsProgress ? ProgressBar(expectedBytes: r.headers["content-length"].flatMap { Int($0) }) : nil
            while let chunk = try await r.body.nextChunk() {
                hasher.update(chunk)
                bodyBytes += chunk.count
                progress?.advance(by: chunk.count)
                if !failed && !template.headOnly { output.write(chunk) }
            }
            progress?.finish()
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
            if verbose { StandardError.write(VerboseObserver.prefix + "* \(error)") }
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
