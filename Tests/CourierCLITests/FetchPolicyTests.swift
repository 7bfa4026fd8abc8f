import CourierCore
import CourierTestSupport
import Foundation
import Testing

/// `courier fetch --policy`: every URL through one data loader that applies the policy.
@Suite(.timeLimit(.minutes(1)), .onBlockingThreads) struct FetchPolicyTests {
    @Test func a503ThenA200IsRetriedAndReportedAsTwoAttempts() async throws {
        let server = try RecordingServer { index, _ in
            index == 0 ? RecordingServer.Reply(status: 503, body: "busy") : RecordingServer.Reply(body: "fine")
        }
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        let policy = try files.write("policy.yaml", """
            version: 1
            services:
              local:
                hosts: [127.0.0.1]
                scheme: http
                retry: { max-attempts: 3, on: [503], methods: [GET, POST], backoff: { initial: 20ms, jitter: none } }
            """)
        let result = try await CourierProcess.run(["fetch", "--policy", policy, "-v", "--json-report", "-", server.url("/v1/item")])
        // -v also shows the policy's warnings (retrying POST without an idempotency key), with file:line:column.
        #expect(result.stderr.contains("\(policy):6:51: warning:"), "\(result.stderr)")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "fine")
        let report = try #require(try FetchTestFiles.reports(result.stderr).first)
        #expect(report["status"] as? Int == 200)
        #expect(report["attempts"] as? Int == 2)
        let waits = try #require(report["waits"] as? [String: Any])
        #expect((waits["backoff"] as? Double ?? 0) >= 0.015, "\(waits)")
        // -v prints the loader's decisions as they happen.
        #expect(result.stderr.contains("#1 attempt 1: retrying in 20ms after status 503"), "\(result.stderr)")
        #expect(server.requests.count == 2)

        // Without --policy the same server's 503 is the answer: one attempt, curl-like.
        let plain = try RecordingServer { _, _ in RecordingServer.Reply(status: 503, body: "busy") }
        defer { plain.stop() }
        let once = try await CourierProcess.run(["fetch", "--json-report", "-", plain.url("/v1/item")])
        #expect(once.status == 0)
        #expect(try FetchTestFiles.reports(once.stderr).first?["attempts"] as? Int == 1)
        #expect(plain.requests.count == 1)
    }

    @Test func theAuthoriserSecretComesFromTheEnvironmentAndReachesOnlyItsHost() async throws {
        let assigned = try RecordingServer()
        defer { assigned.stop() }
        let other = try RecordingServer()
        defer { other.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        let policy = try files.write("policy.yaml", """
            version: 1
            authorisers:
              bearer:
                plugin: static-bearer
                settings: { token: "${env:COURIER_FETCH_TEST_TOKEN}" }
                allow-plain-http: true
            services:
              assigned:
                hosts: [127.0.0.1]
                scheme: http
                authoriser: bearer
            """)
        // `localhost` is the same loopback address under a host name no service claims.
        let result = try await CourierProcess.run(
            ["fetch", "--policy", policy, "-H", "X-Trace: on", "--json-report", "-", assigned.url("/v1/me"), other.localhostURL("/v1/me")],
            environment: ["COURIER_FETCH_TEST_TOKEN": "s3cret-from-env"]
        )
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "okok")
        let mine = try #require(assigned.requests.first)
        #expect(mine.header("authorization") == "Bearer s3cret-from-env")
        #expect(mine.header("x-trace") == "on")
        let theirs = try #require(other.requests.first)
        #expect(theirs.header("authorization") == nil, "the credential leaked to a host the policy did not assign")
        #expect(theirs.header("x-trace") == "on")
        #expect(!result.stderr.contains("s3cret"))

        // Without the variable the authoriser cannot start: a clear error, exit 67, and nothing is sent to its
        // host (the other URL still goes).
        let missing = try await CourierProcess.run(
            ["fetch", "--policy", policy, "--json-report", "-", assigned.url("/v1/again"), other.localhostURL("/v1/again")]
        )
        #expect(missing.status == 67, "\(missing.stderr)")
        let reports = try FetchTestFiles.reports(missing.stderr)
        #expect((reports.first?["error"] as? [String: Any])?["kind"] as? String == "authorisation")
        #expect(missing.stderr.contains("COURIER_FETCH_TEST_TOKEN"), "\(missing.stderr)")
        #expect(reports.last?["status"] as? Int == 200)
        #expect(assigned.requests.count == 1)
        #expect(other.requests.count == 2)
    }

    @Test func anUnreachableHostFallsBackToTheNextAddressWithItsOwnHostHeader() async throws {
        let primary = try ClosedPort()
        let fallback = try RecordingServer()
        defer { fallback.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        let policy = try files.write("policy.yaml", """
            version: 1
            services:
              local:
                hosts: [localhost]
                scheme: http
                fallbacks: { localhost: ["127.0.0.1:\(fallback.port)"] }
            """)
        let result = try await CourierProcess.run(
            ["fetch", "--policy", policy, "-v", "--json-report", "-", "http://localhost:\(primary.port)/v1/a"]
        )
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "ok")
        #expect(result.stderr.contains("sending to fallback 127.0.0.1:\(fallback.port)"), "\(result.stderr)")
        #expect(fallback.requests.first?.header("host") == "localhost:\(primary.port)")
        // Without the policy there is no fallback: the connect is refused.
        #expect(try await CourierProcess.run(["fetch", "http://localhost:\(primary.port)/v1/a"]).status == 7)
    }

    @Test func aBadPolicyExits2WithFileLineAndColumnBeforeAnyRequest() async throws {
        let server = try RecordingServer()
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        let policy = try files.write("bad.yaml", """
            version: 1
            services:
              local:
                hosts: [127.0.0.1]
                retires: { max-attempts: 3 }
            """)
        let result = try await CourierProcess.run(["fetch", "--policy", policy, "--json-report", "-", server.url("/v1/a")])
        #expect(result.status == 2)
        #expect(result.stderr.contains("\(policy):5:5: error: unknown key 'retires'"), "\(result.stderr)")
        #expect(result.stderr.contains("no request was sent"))
        #expect(result.stdout.isEmpty)
        #expect(try FetchTestFiles.reports(result.stderr).isEmpty)

        let missing = try await CourierProcess.run(["fetch", "--policy", files.path("absent.yaml"), server.url("/v1/a")])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("absent.yaml"), "\(missing.stderr)")

        let notYAML = try await CourierProcess.run(["fetch", "--policy", try files.write("junk.yaml", "{ [ : \u{1}"), server.url("/v1/a")])
        #expect(notYAML.status == 2)
        #expect(notYAML.stderr.contains("junk.yaml:"), "\(notYAML.stderr)")
        #expect(server.requests.isEmpty)
    }

    @Test func theRateLimitPacesSeveralURLsEvenInParallel() async throws {
        let server = try RecordingServer()
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        let policy = try files.write("policy.yaml", """
            version: 1
            services:
              local:
                hosts: [127.0.0.1]
                scheme: http
                rate-limit: { requests-per-second: 5, burst: 1 }
            """)
        // Six URLs on one endpoint key (127.0.0.1/v1) at 5 per second with a burst of 1: the first goes at once,
        // the sixth about 1 s later, even three at a time.
        let urls = (0..<6).map { server.url("/v1/item/\($0)") }
        let started = ContinuousClock.now
        let result = try await CourierProcess.run(["fetch", "--policy", policy, "--parallel", "3", "--json-report", "-"] + urls)
        #expect(result.status == 0, "\(result.stderr)")
        let arrivals = server.requests.map(\.received)
        #expect(arrivals.count == 6)
        // The sixth admission comes 1 s after the first, which comes after the process starts: the last arrival is
        // at least 1 s after the start however loaded the machine (a load delays arrivals, never advances them;
        // the spread between first and last arrival can shrink when the first one's connect is slow). Unpaced,
        // all six arrive within the process's start-up time.
        let last = try #require(arrivals.max())
        #expect(last - started >= .seconds(1), "6 requests at 5/s all arrived within \(last - started) of the start")
        let span = last - (try #require(arrivals.min()))
        #expect(span < .seconds(8), "6 requests at 5/s took \(span)")
        let reports = try FetchTestFiles.reports(result.stderr)
        #expect(reports.map { $0["url"] as? String } == urls)
        let waited = reports.compactMap { ($0["waits"] as? [String: Any])?["rateLimit"] as? Double }
        #expect(waited.count == 6)
        #expect(waited.reduce(0, +) >= 1.5, "rate-limit waits \(waited)")
    }

    @Test func aFailedRequestReportsTheLoadersAttemptsAndMaxTimeIsItsDeadline() async throws {
        let refused = try ClosedPort()
        let slow = try RecordingServer { _, _ in RecordingServer.Reply(delay: .seconds(3)) }
        defer { slow.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        let policy = try files.write("policy.yaml", """
            version: 1
            services:
              local:
                hosts: [127.0.0.1]
                scheme: http
                retry: { max-attempts: 3, on: [connect-error], backoff: { initial: 10ms, jitter: none } }
            """)
        let result = try await CourierProcess.run(["fetch", "--policy", policy, "--json-report", "-", refused.url("/v1/a")])
        #expect(result.status == 7, "\(result.stderr)")
        let report = try #require(try FetchTestFiles.reports(result.stderr).first)
        #expect(report["attempts"] as? Int == 3)
        #expect((report["error"] as? [String: Any])?["kind"] as? String == "connect")
        #expect(report["status"] is NSNull)

        // The server answers after 3 s; --max-time 0.5 gives up long before (timed by the report, so the
        // client's start-up on a loaded machine does not count).
        let late = try await CourierProcess.run(["fetch", "--policy", policy, "--max-time", "0.5", "--json-report", "-", slow.url("/v1/slow")])
        #expect(late.status == 28, "\(late.stderr)")
        let lateReport = try #require(try FetchTestFiles.reports(late.stderr).first)
        #expect((lateReport["error"] as? [String: Any])?["kind"] as? String == "timeout")
        let total = try #require((lateReport["timings"] as? [String: Any])?["total"] as? Double)
        #expect(total >= 0.45 && total < 2.5, "--max-time 0.5 gave up after \(total) s")
    }
}
