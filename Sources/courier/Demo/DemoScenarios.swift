internal import CourierKit
internal import CourierCore

/// The five scenarios: each sends its requests, then checks the responses, the trace and the upstream's
/// records.
struct DemoScenarios: Sendable {
    let loader: DataLoader
    let printer: DemoTracePrinter
    let upstream: DemoUpstream
    let port: Int
    /// The policy, for the numbers the explanations quote.
    let graph: PolicyGraph
    /// The demo's start, which the upstream's record times count from.
    let origin: ContinuousClock.Instant

    private var catalogue: String { "http://127.0.0.1:\(port)" }

    /// Five searches at once against an endpoint limited to 5 per second with a burst of 1.
    func pacing(_ name: String, _ checks: inout DemoChecks) async {
        let count = 5
        // checkShape made sure there is a limit that makes some of them wait.
        let limit = graph.route(for: HTTPURL("\(catalogue)/search")!).rateLimit ?? RateLimit(requestsPerSecond: 1, burst: 1)
        let waiting = count - limit.burst
        let spread = Duration.seconds(Double(waiting) / limit.requestsPerSecond)
        printer.section(
            "1. Rate limit pacing",
            "Five searches start at once; the policy allows 127.0.0.1/search \(DemoScenarios.number(limit.requestsPerSecond)) "
                + "requests per second with a burst of \(limit.burst), so \(waiting) of them wait their turn (in arrival order)."
        )
        let started = ContinuousClock.now - origin
        let results = await loadAll((1...count).map { Request(url: "\(catalogue)/search?q=\($0)") })
        expectSuccess(results, name, &checks)
        let waits = printer.events { $0.hasPrefix("\(catalogue)/search") }.filter {
            if case .rateLimited = $0.kind { return true } else { return false }
        }
        // One fewer, in case a slow machine started one of them after a token had come back.
        checks.expect(
            waits.count >= waiting - 1, name, "at least \(waiting - 1) of the five wait for the rate limit", "\(waits.count) waited"
        )
        // Measured from the moment the five loads started, not from the first arrival: a machine that delays the
        // first request (a busy CI runner) must not make correct pacing look too fast. Without pacing, the last
        // would arrive at once.
        let arrivals = upstream.records.filter { $0.path == "/search" }.map(\.at)
        if let last = arrivals.max() {
            checks.expect(
                last - started >= spread * 0.75, name,
                "the last of them reaches the upstream about \(DemoScenarios.ms(spread)) after they started",
                "\(DemoScenarios.ms(last - started)) after the start"
            )
        }
    }

    /// A 429 with `Retry-After: 1`: the loader pauses the endpoint for a second, then succeeds.
    func retryAfter(_ name: String, _ checks: inout DemoChecks) async {
        let url = "\(catalogue)/busy"
        let retry = graph.route(for: HTTPURL(url)!).retry
        let asked = Duration.seconds(UpstreamScript.retryAfterSeconds)
        printer.section(
            "2. 429 with Retry-After",
            "The upstream answers 429 with Retry-After: \(UpstreamScript.retryAfterSeconds); the policy "
                + (retry.respectRetryAfter
                    ? "respects it (capped at \(DurationFormat.format(retry.retryAfterCap))), so the endpoint pauses before the retry."
                    : "ignores it (respect-retry-after: false), although the checks below expect it to be respected.")
        )
        let responses = expectSuccess([await load(Request(url: url))], name, &checks)
        checks.expect(responses.first?.attempts == 2, name, "two attempts", "\(responses.first?.attempts ?? 0)")
        let honoured = printer.events { $0 == url }.contains {
            if case .retryAfter(let requested, let applied, _) = $0.kind { return requested == asked && applied == asked }
            return false
        }
        checks.expect(honoured, name, "the trace shows Retry-After \(DurationFormat.format(asked)) applied to the endpoint")
        let arrivals = upstream.records.filter { $0.path == "/busy" }.map(\.at)
        checks.expect(arrivals.count == 2, name, "the upstream sees two attempts", "\(arrivals.count)")
        if arrivals.count == 2 {
            checks.expect(
                arrivals[1] - arrivals[0] >= asked * 0.9, name, "the retry comes \(DurationFormat.format(asked)) later",
                "\(DemoScenarios.ms(arrivals[1] - arrivals[0])) later"
            )
        }
    }

    /// 503 twice, then 200: retries with jittered exponential back-off.
    func serviceUnavailable(_ name: String, _ checks: inout DemoChecks) async {
        let url = "\(catalogue)/flaky"
        let backoff = graph.route(for: HTTPURL(url)!).retry.backoff
        printer.section(
            "3. 503 twice, then 200",
            "The policy retries 503 with exponential back-off: base \(DurationFormat.format(backoff.initial)), "
                + "times \(DemoScenarios.number(backoff.multiplier)) per retry, with \(backoff.jitter) jitter "
                + "(\(DemoScenarios.explain(backoff.jitter)))."
        )
        let responses = expectSuccess([await load(Request(url: url))], name, &checks)
        checks.expect(responses.first?.attempts == 3, name, "three attempts", "\(responses.first?.attempts ?? 0)")
        let delays = printer.events { $0 == url }.compactMap { event -> Duration? in
            if case .retrying(let reason, let delay) = event.kind, reason == "status 503" { return delay }
            return nil
        }
        checks.expect(delays.count == 2, name, "two retries after status 503 in the trace", "\(delays.count)")
        checks.expect(delays.allSatisfy { $0 > .zero }, name, "every retry waits a back-off delay first")
    }

    /// Four requests at once with a revoked token: each gets 401, and they share one refresh.
    func refresh(_ name: String, _ checks: inout DemoChecks) async {
        printer.section(
            "4. 401, then one shared token refresh",
            "Four requests to localhost need an OAuth 2 token. The upstream revokes the first token it issues, so they "
                + "get 401; they share ONE refresh (over plain http: allow-plain-http) and retry."
        )
        let base = "http://localhost:\(port)/me"
        let results = await loadAll((1...4).map { Request(url: "\(base)?n=\($0)") })
        let responses = expectSuccess(results, name, &checks)
        checks.expect(
            upstream.tokensIssued == 2, name, "two tokens issued in all: the first, and ONE refresh shared by every 401",
            "\(upstream.tokensIssued) issued"
        )
        let unauthorised = upstream.records.filter { $0.path == "/me" && $0.status == 401 }.count
        checks.expect(unauthorised >= 1, name, "the upstream refuses the revoked token", "\(unauthorised) refusals")
        let refreshing = printer.events { $0.hasPrefix(base) }.filter {
            if case .refreshing = $0.kind { return true } else { return false }
        }
        checks.expect(
            refreshing.count == unauthorised, name, "the trace shows a refresh decision for each 401",
            "\(refreshing.count) for \(unauthorised)"
        )
        let starters = refreshing.filter {
            if case .refreshing(_, .started) = $0.kind { return true } else { return false }
        }
        checks.expect(
            starters.count == 1, name, "one request starts the refresh; the others join it or find it done",
            "\(starters.count) started one"
        )
        checks.expect(
            responses.allSatisfy { $0.attempts <= 2 }, name, "at most one retry per request",
            responses.map { "\($0.attempts)" }.joined(separator: ",")
        )
    }

    /// `[::1]` refuses connections: the first request falls back to 127.0.0.1 with its Host header; the
    /// second skips the cooling-down primary.
    func fallback(_ name: String, _ checks: inout DemoChecks) async {
        let primary = "[::1]:\(port)"
        let fallback = "127.0.0.1:\(port)"
        printer.section(
            "5. Unreachable primary, working fallback",
            "Nothing listens on \(primary); the policy's fallback for [::1] is 127.0.0.1 (same port). The Host header "
                + "stays [::1]. The second request skips the primary while it cools down."
        )
        let url = "http://\(primary)/status"
        let first = expectSuccess([await load(Request(url: "\(url)?n=1"))], name, &checks)
        checks.expect(
            first.first?.addressesTried == [primary, fallback], name, "the first request tries \(primary), then \(fallback)",
            first.first.map { "\($0.addressesTried)" } ?? "no response"
        )
        let second = expectSuccess([await load(Request(url: "\(url)?n=2"))], name, &checks)
        checks.expect(
            second.first?.addressesTried == [fallback], name, "the second request goes straight to \(fallback)",
            second.first.map { "\($0.addressesTried)" } ?? "no response"
        )
        let skipped = printer.events { $0 == "\(url)?n=2" }.contains {
            if case .coolingDown(let target) = $0.kind { return target == primary }
            return false
        }
        checks.expect(skipped, name, "the trace shows \(primary) skipped while cooling down")
        let hosts = upstream.records.filter { $0.path == "/status" }.map(\.host)
        checks.expect(hosts == [primary, primary], name, "the fallback receives Host: \(primary) both times", "\(hosts)")
    }

    // MARK: - Loading

    private func load(_ request: Request) async -> Result<Response, CourierError> {
        do {
            return .success(try await loader.load(request))
        } catch {
            return .failure(error)
        }
    }

    /// Starts every request at once, in order (so they are numbered in order), and waits for all.
    private func loadAll(_ requests: [Request]) async -> [Result<Response, CourierError>] {
        let (stream, continuation) = AsyncStream.makeStream(of: (Int, Result<Response, CourierError>).self)
        for (index, request) in requests.enumerated() {
            loader.load(request) { continuation.yield((index, $0)) }
        }
        var results = [Result<Response, CourierError>?](repeating: nil, count: requests.count)
        var left = requests.count
        for await (index, result) in stream {
            results[index] = result
            left -= 1
            if left == 0 { break }
        }
        continuation.finish()
        return results.compactMap { $0 }
    }

    /// Checks that every result is a 200 and returns the responses.
    @discardableResult
    private func expectSuccess(
        _ results: [Result<Response, CourierError>], _ name: String, _ checks: inout DemoChecks
    ) -> [Response] {
        var responses: [Response] = []
        for result in results {
            switch result {
            case .success(let response):
                responses.append(response)
                checks.expect(response.status == 200, name, "\(response.url) ends with 200", "\(response.status)")
            case .failure(let error):
                checks.expect(false, name, "every request gets a response", "\(error.kind): \(error.message)")
            }
        }
        return responses
    }

    static func ms(_ d: Duration) -> String { "\(Int((d.seconds * 1000).rounded()))ms" }

    /// `5` for 5.0, `2.5` for 2.5.
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }

    static func explain(_ jitter: BackoffPolicy.Jitter) -> String {
        switch jitter {
        case .none: return "each delay exactly the base"
        case .full: return "each delay uniform in 0…base"
        case .equal: return "each delay uniform in base/2…base"
        case .decorrelated: return "each delay uniform in initial…3 × the previous one"
        }
    }
}
