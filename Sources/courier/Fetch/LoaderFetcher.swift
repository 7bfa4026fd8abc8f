internal import CourierKit
internal import CourierCore

/// Fetches URLs through one data loader built from `--policy`: the policy's rate limits, retries with back-off
/// and Retry-After, fallbacks and authorisers apply, and the report's attempts, timings and wire counts are the
/// loader's. It also serves `--cache-dir` (with or without a policy) and `--offline`. The loader returns whole bodies, so a body is written when its response is complete.
struct LoaderFetcher: URLFetcher {
    let service: DataLoaderService
    let loader: DataLoader
    let template: FetchRequestTemplate
    let verbose: Bool

    init(service: DataLoaderService, template: FetchRequestTemplate, verbose: Bool, offline: Bool = false) {
        self.service = service
        self.verbose = verbose
        let factory = service.makeFactory()
        factory.isOffline = offline
        self.loader = factory.makeLoader()
        self.template = template
        if verbose { service.addTraceObserver { StandardError.write($0.description) } }
    }

    func fetch(_ url: HTTPURL, index: Int, into output: BodyWriter) async -> FetchOutcome {
        let offset = template.resumeOffset(into: output)
        let request = Request(
            url: url.description, method: template.method, headers: template.headers(from: offset), body: template.body,
            bodyStream: template.formBody, timeout: template.maxTime, sourceIdentifier: "courier-fetch"
        )
        let loader = self.loader
        let start = ContinuousClock.now
        let result: Result<Response, CourierError>
        do throws(CourierError) {
            result = .success(try await loader.load(request))
        } catch {
            result = .failure(error)
        }
        switch result {
        case .success(let response):
            let failed = template.fails(response.status) && !(offset > 0 && response.status == 416)
            if offset > 0, !failed, let verdict = FetchResume.verdict(offset: offset, response.status, response.headers) {
                return FetchResume.outcome(verdict, report: FetchReport(url: url.description, loaded: response))
            }
            if !failed {
                if template.includeHead {
                    output.write(FetchRequestTemplate.head(
                        version: response.httpVersion, status: response.status, reason: response.reason, headers: response.headers
                    ))
                }
                if !template.headOnly { output.write(response.body) }
            }
            var outcome = FetchOutcome(
                report: FetchReport(url: url.description, loaded: response), exitStatus: FetchExitCode.success,
                end: template.end(for: response.status)
            )
            if failed {
                outcome.messages.append("courier fetch: the server answered \(response.status) (\(url))")
                outcome.exitStatus = FetchExitCode.httpError
            }
            return outcome
        case .failure(let error):
            // A failed load's error carries the whole request's attempts and wire counts.
            return FetchOutcome(
                report: FetchReport(
                    url: url.description, failure: error, attempts: error.attempts,
                    bytes: (error.bytesSent, error.bytesReceived),
                    total: ContinuousClock.now - start
                ),
                exitStatus: FetchExitCode.code(for: error.kind), end: .failed,
                messages: ["courier fetch: \(error)"]
            )
        }
    }
}
