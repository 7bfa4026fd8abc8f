internal import CourierKit
internal import Foundation
internal import Synchronization
internal import CourierCore
internal import CourierPolicy
internal import CourierAuthorisers

/// Runs `courier demo`: compiles the demo policy, starts the upstream (``DemoUpstream``), sends five scenarios'
/// requests through a ``DataLoader`` while ``DemoTracePrinter`` prints the loader's decisions live, then checks
/// that each scenario did what the policy says and prints a summary.
///
/// The scenarios run one after the other; the requests inside one run at the same time where the scenario is
/// about concurrency (pacing, the shared refresh).
struct DemoRunner {
    /// The policy file, or nil for the built-in demo policy (``DemoPolicy``).
    let policyPath: String?
    /// Whether the trace uses ANSI colours.
    let color: Bool
    /// The longest the scenarios may take before the demo cancels its requests, skips the scenarios left and
    /// fails (a normal run takes about 2 seconds; each request's own deadline is the policy's total timeout).
    static let overallLimit = Duration.seconds(10)

    /// The policy as the banner and diagnostics name it.
    var policyName: String { policyPath ?? DemoPolicy.name }

    /// Runs the demo. Returns the checks (``DemoChecks/passed`` decides the exit status).
    ///
    /// - Throws: ``DemoError`` when the policy or the upstream keeps the demo from running at all.
    func run() async throws(DemoError) -> DemoChecks {
        let origin = ContinuousClock.now
        let printer = DemoTracePrinter(origin: origin, color: color)

        let compilation = policyPath.map { PolicyCompiler(registry: .standard).compile(file: $0) } ?? DemoPolicy.compile()
        guard !compilation.hasErrors, let graph = compilation.graph else {
            let error = PolicyLoadError(path: policyName, diagnostics: compilation.diagnostics)
            let lines = error.diagnostics.map(\.description).joined(separator: "\n")
            throw .policy("\(error)\n\(lines)")
        }
        let service = DataLoaderService(graph: graph, configuration: .init(userAgent: "courier-demo"))
        let clientID = try DemoRunner.checkShape(of: service.graph)

        let refreshToken = "demo-refresh-" + String(UInt64.random(in: 1...UInt64.max), radix: 16)
        let upstream = try await DemoUpstream.start(
            script: UpstreamScript(refreshToken: refreshToken, clientID: clientID), origin: origin,
            onRecord: { printer.upstream($0) }
        )
        let tally = ConsumptionTally()
        service.addTraceObserver { printer.event($0) }
        service.addConsumptionObserver { tally.record($0) }
        // The values the policy reads with ${env:...}: given to this user's factory, not put in the process's
        // environment.
        let factory = service.makeFactory(environment: [
            "COURIER_DEMO_PORT": String(upstream.port), "COURIER_DEMO_REFRESH_TOKEN": refreshToken,
        ])
        let loader = factory.makeLoader()
        let scenarios = DemoScenarios(
            loader: loader, printer: printer, upstream: upstream, port: upstream.port, graph: service.graph, origin: origin
        )

        let port = upstream.port
        printer.note("courier demo: upstream on 127.0.0.1:\(port) (nothing listens on [::1]:\(port)), policy \(policyName)")
        printer.note("Each line: time since the start, request number, attempt, then what the loader decided and why.")
        printer.note("'upstream:' lines are the server's side of the same exchange.")

        // A bound on the whole run: if a scenario hangs, its requests are cancelled (their callers resume at
        // once) and the checks report what did not happen.
        let timedOut = Atomic<Bool>(false)
        let watchdog = Task {
            try await Task.sleep(for: DemoRunner.overallLimit)
            timedOut.store(true, ordering: .relaxed)
            loader.cancelAll()
        }
        var checks = DemoChecks()
        let steps: [(String, @Sendable (String, inout DemoChecks) async -> Void)] = [
            ("rate limit pacing", scenarios.pacing), ("429 with Retry-After", scenarios.retryAfter),
            ("503 and back-off", scenarios.serviceUnavailable), ("401 and one refresh", scenarios.refresh),
            ("fallback", scenarios.fallback),
        ]
        for (name, step) in steps {
            guard !timedOut.load(ordering: .relaxed) else {
                checks.expect(false, name, "the scenario runs", "not started: the demo passed its \(DemoRunner.overallLimit) limit")
                continue
            }
            let before = checks.count
            await step(name, &checks)
            let failed = checks.failures(in: name)
            if failed.isEmpty {
                printer.note("  ok: \(checks.count - before) checks", good: true)
            } else {
                for failure in failed { printer.note("  FAILED: \(failure.text)", bad: true) }
            }
        }
        watchdog.cancel()
        checks.expect(!timedOut.load(ordering: .relaxed), "demo", "finish within \(DemoRunner.overallLimit)", "requests cancelled")

        let totals = tally.current
        let records = upstream.records
        await upstream.stop()
        // Requests and attempts as the trace numbered them; bytes as the consumption observer counted them.
        let events = printer.events
        let requests = Set(events.map(\.request)).count
        let attempts = Set(events.filter { $0.attempt > 0 }.map { "\($0.request).\($0.attempt)" }).count
        let tokenRequests = records.filter { $0.path == "/oauth/token" }.count
        printer.section(
            "Summary",
            "\(requests) requests, \(attempts) attempts, \(totals.bytesSent) bytes sent and \(totals.bytesReceived) received "
                + "(headers included, every attempt, from the consumption observer) in "
                + "\(DemoScenarios.ms(ContinuousClock.now - origin)); the upstream answered \(records.count) requests, "
                + "\(tokenRequests) of them token requests."
        )
        checks.expect(
            totals.requests == requests, "summary", "one consumption report per request",
            "\(totals.requests) reports for \(requests) requests"
        )
        if checks.passed {
            printer.note("All five scenarios behaved as the policy says (\(checks.count) checks).", good: true)
        } else {
            printer.note("\(checks.failures.count) of \(checks.count) checks failed:", bad: true)
            for failure in checks.failures { printer.note("  - \(failure)", bad: true) }
        }
        return checks
    }

    /// Checks that the policy routes the demo's three hosts the way the scenarios need, and returns the OAuth
    /// client id the token endpoint should accept (nil when it is not a literal).
    static func checkShape(of graph: PolicyGraph) throws(DemoError) -> String? {
        let catalogue = graph.route(for: HTTPURL("http://127.0.0.1:1/search")!)
        guard let limit = catalogue.rateLimit, limit.burst <= 3 else {
            throw .policyShape(
                "127.0.0.1/search has no rate limit with a burst of 3 or less (the pacing scenario needs two of five "
                    + "requests to wait)"
            )
        }
        guard catalogue.retry.maxAttempts >= 3 else {
            throw .policyShape("127.0.0.1 allows \(catalogue.retry.maxAttempts) attempts; the 503 scenario needs 3")
        }
        let account = graph.route(for: HTTPURL("http://localhost:1/me")!)
        guard let authoriser = account.authoriser, authoriser.plugin == "oauth2-refresh" else {
            throw .policyShape("localhost has no oauth2-refresh authoriser (the refresh scenario needs one)")
        }
        let mirror = graph.route(for: HTTPURL("http://[::1]:1/status")!)
        guard mirror.fallbacks.contains(HostAddress(host: "127.0.0.1")) else {
            throw .policyShape("[::1] has no fallback to 127.0.0.1 without a port (the fallback scenario needs one)")
        }
        if case .string(let id)? = authoriser.settings["client-id"] { return id.literalValue }
        return nil
    }
}
