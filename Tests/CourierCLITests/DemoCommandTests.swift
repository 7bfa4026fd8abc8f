import CourierCore
import CourierTestSupport
import CourierTesting
import Foundation
import Synchronization
import Testing

@testable import courier

#if canImport(Glibc)
import Glibc
#endif

/// `courier demo` as a user runs it: the built binary, against the upstream it starts itself on loopback.
@Suite(.timeLimit(.minutes(1)), .onBlockingThreads) struct DemoCommandTests {
    /// The lines of `text` that contain every one of `parts`.
    func lines(_ text: String, containing parts: String...) -> [Substring] {
        text.split(separator: "\n").filter { line in parts.allSatisfy { line.contains($0) } }
    }

    @Test func runsEveryScenarioAndTracesEachDecision() async throws {
        let started = ContinuousClock.now
        let r = try await CourierProcess.run(["demo"], in: CourierProcess.repositoryRoot, timeout: 30)
        let elapsed = ContinuousClock.now - started
        #expect(r.status == 0, "stdout:\n\(r.stdout)\nstderr:\n\(r.stderr)")
        #expect(r.stderr.isEmpty)
        #expect(elapsed < .seconds(15), "the demo took \(elapsed)")
        let out = r.stdout
        // Standard output is a file here, not a terminal: no colours.
        #expect(!out.contains("\u{1B}["))

        // 1. Requests over the limit wait their turn.
        #expect(lines(out, containing: "waiting", "for the rate limit of 127.0.0.1/search").count >= 3)
        // 2. The Retry-After pause, then the retry.
        #expect(lines(out, containing: "Retry-After 1000ms: pausing 127.0.0.1/busy for 1000ms").count == 1)
        #expect(lines(out, containing: "retrying in", "after status 429").count == 1)
        // 3. Two retries after 503, each after a back-off delay, then 200.
        #expect(lines(out, containing: "retrying in", "after status 503").count == 2)
        #expect(lines(out, containing: "upstream: GET /flaky -> 200").count == 1)
        // 4. Every 401 asks for a refresh, and the token endpoint sees exactly one refresh after the first grant.
        // One request starts the refresh; the others join it or find it done (single flight, from the trace).
        #expect(lines(out, containing: "401: refreshing 'demo-oauth'").count == 1)
        #expect(
            lines(out, containing: "401: ", "demo-oauth").count == lines(out, containing: "upstream: GET /me", "-> 401").count
        )
        #expect(lines(out, containing: "upstream: POST /oauth/token -> 200, issued access token").count == 2)
        #expect(lines(out, containing: "upstream: GET /me", "-> 200, access token 2 accepted").count == 4)
        // 5. The refused primary, the fallback with the Host header unchanged, then the cool-down.
        #expect(lines(out, containing: "[::1]:", "is unreachable", "Connection refused").count == 1)
        #expect(lines(out, containing: "sending to fallback 127.0.0.1:", "(Host header unchanged)").count == 2)
        #expect(lines(out, containing: "upstream: GET /status", "-> 200, Host: [::1]:").count == 2)
        #expect(lines(out, containing: "skipping [::1]:", "cooling down").count == 1)
        // The summary and the verdict.
        // 13 requests; attempts: 5 + 2 + 3 + (4 to 8: a request authorised after the refresh needs no retry) + 2.
        let summary = try #require(lines(out, containing: "13 requests, ", "from the consumption observer").first)
        let attempts = try #require(Int(summary.split(separator: "13 requests, ")[1].prefix { $0.isNumber }))
        #expect((16...20).contains(attempts), "\(summary)")
        #expect(lines(out, containing: "ok:", "checks").count == 5)
        #expect(out.contains("All five scenarios behaved as the policy says"))
    }

    @Test func theBuiltInPolicyIsPoliciesDemoYAMLByteForByte() throws {
        let file = try Data(contentsOf: CourierProcess.repositoryRoot.appending(path: "policies/demo.yaml"))
        #expect(
            Data(DemoPolicy.text.utf8) == file,
            "Sources/courier/Demo/DemoPolicy.swift and policies/demo.yaml differ: change both together"
        )
    }

    @Test func runsFromAnyDirectoryWithTheBuiltInPolicy() async throws {
        let dir = FileManager.default.temporaryDirectory.appending(path: "demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try await CourierProcess.run(["demo"], in: dir, timeout: 30)
        #expect(r.status == 0, "stdout:\n\(r.stdout)\nstderr:\n\(r.stderr)")
        #expect(r.stdout.contains("policy policies/demo.yaml (built in)"))
        #expect(r.stdout.contains("All five scenarios behaved as the policy says"))
    }

    @Test func aScenarioThatMisbehavesFailsByName() async throws {
        // The demo policy with Retry-After ignored: the 429 is retried after the back-off instead of a second.
        let policy = try String(
            contentsOf: CourierProcess.repositoryRoot.appending(path: "policies/demo.yaml"), encoding: .utf8
        )
        #expect(policy.contains("respect-retry-after: true"))
        let dir = FileManager.default.temporaryDirectory.appending(path: "demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appending(path: "ignores-retry-after.yaml")
        try Data(policy.replacingOccurrences(of: "respect-retry-after: true", with: "respect-retry-after: false").utf8)
            .write(to: file)

        let r = try await CourierProcess.run(["demo", "--policy", file.path], in: dir, timeout: 30)
        #expect(r.status == 1, "stdout:\n\(r.stdout)")
        #expect(r.stdout.contains("Retry-After 1000ms ignored (the route does not respect it)"))
        #expect(r.stdout.contains("- 429 with Retry-After: the retry comes 1s later (got: "))
        #expect(r.stdout.contains("- 429 with Retry-After: the trace shows Retry-After 1s applied to the endpoint"))
        // Only that scenario failed.
        #expect(lines(r.stdout, containing: "ok:", "checks").count == 4)
        #expect(!r.stdout.contains("All five scenarios"))
    }

    @Test func aPolicyTheDemoCannotUseIsAUsageError() async throws {
        let missing = try await CourierProcess.run(["demo", "--policy", "nope.yaml"], in: CourierProcess.repositoryRoot)
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("courier demo: cannot find nope.yaml"))
        #expect(missing.stdout.isEmpty)

        let broken = try await CourierProcess.run(["demo", "--policy", "broken/typo.yaml"])
        #expect(broken.status == 2)
        #expect(broken.stderr.contains("courier demo: the policy broken/typo.yaml has"))
        #expect(broken.stderr.contains("error:"))

        let unfit = try await CourierProcess.run(["demo", "--policy", "policies/minimal.yaml"], in: CourierProcess.repositoryRoot)
        #expect(unfit.status == 2)
        #expect(unfit.stderr.contains("the policy does not fit the demo: 127.0.0.1/search has no rate limit"))

        let usage = try await CourierProcess.run(["demo", "--colour"])
        #expect(usage.status == 2)
    }

    @Test func helpNamesTheOptions() async throws {
        let r = try await CourierProcess.run(["demo", "--help"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("--no-color"))
        #expect(r.stdout.contains("--policy"))
    }
}

/// What the script reads of a request (the demo's MockServer parses it).
@Suite(.onBlockingThreads) struct UpstreamRequestTests {
    @Test func pathQueryAndFormFields() throws {
        let body = "grant_type=refresh_token&refresh_token=a%2Fb+c&client_id=x&bad=%zz"
        let request = UpstreamRequest(method: "POST", target: "/t?x=1", headers: ["Host": "h"], body: Array(body.utf8))
        #expect(request.path == "/t")
        #expect(request.host == "h")
        #expect(request.line == "POST /t?x=1")
        #expect(request.formFields == ["grant_type": "refresh_token", "refresh_token": "a/b c", "client_id": "x"])
    }
}

/// The upstream's scenarios, as a trace: one request in, one answer out.
@Suite(.onBlockingThreads) struct UpstreamScriptTests {
    func request(_ method: String, _ target: String, headers: HTTPHeaders = HTTPHeaders(), body: String = "") -> UpstreamRequest {
        UpstreamRequest(method: method, target: target, headers: headers, body: Array(body.utf8))
    }

    func status(_ script: inout UpstreamScript, _ r: UpstreamRequest) -> Int {
        script.handle(r, at: .zero).0.status
    }

    @Test func throttlesOnceThenServes() {
        var script = UpstreamScript(refreshToken: "r", clientID: "c")
        let (reply, record) = script.handle(request("GET", "/busy"), at: .milliseconds(5))
        #expect(reply.status == 429)
        #expect(reply.headers["retry-after"] == "1")
        #expect(record.at == .milliseconds(5))
        #expect(status(&script, request("GET", "/busy")) == 200)
        #expect(status(&script, request("GET", "/busy")) == 200)
    }

    @Test func failsTwiceThenRecovers() {
        var script = UpstreamScript(refreshToken: "r", clientID: "c")
        #expect(status(&script, request("GET", "/flaky")) == 503)  // failure 1 of 2
        #expect(status(&script, request("GET", "/flaky")) == 503)  // failure 2 of 2
        #expect(status(&script, request("GET", "/flaky")) == 200)  // recovered
        #expect(status(&script, request("GET", "/flaky")) == 200)
        #expect(script.records.map(\.status) == [503, 503, 200, 200])
    }

    @Test func revokesTheFirstTokenAndAcceptsTheRefreshedOne() {
        var script = UpstreamScript(refreshToken: "secret", clientID: "courier-demo")
        let form = ["Content-Type": "application/x-www-form-urlencoded"] as HTTPHeaders
        // No token, or a grant the endpoint does not accept: refused, no token issued.
        #expect(status(&script, request("GET", "/me")) == 401)
        #expect(status(&script, request("POST", "/oauth/token", headers: form, body: "grant_type=refresh_token&refresh_token=wrong&client_id=courier-demo")) == 400)
        #expect(status(&script, request("POST", "/oauth/token", headers: form, body: "grant_type=refresh_token&refresh_token=secret&client_id=other")) == 400)
        #expect(status(&script, request("POST", "/oauth/token", headers: form, body: "grant_type=password")) == 400)
        #expect(script.tokensIssued == 0)
        // The first grant: token 1, revoked at once.
        let grant = "grant_type=refresh_token&refresh_token=secret&client_id=courier-demo"
        let (first, _) = script.handle(request("POST", "/oauth/token", headers: form, body: grant), at: .zero)
        #expect(first.status == 200)
        #expect(String(decoding: first.body, as: UTF8.self).contains(#""access_token":"demo-access-1""#))
        #expect(status(&script, request("GET", "/me", headers: ["Authorization": "Bearer demo-access-1"])) == 401)
        // The refresh: token 2 works; a token never issued does not.
        #expect(status(&script, request("POST", "/oauth/token", headers: form, body: grant)) == 200)
        #expect(status(&script, request("GET", "/me", headers: ["Authorization": "Bearer demo-access-2"])) == 200)
        #expect(status(&script, request("GET", "/me", headers: ["Authorization": "Bearer demo-access-3"])) == 401)
        #expect(script.tokensIssued == 2)
    }

    @Test func echoesTheHostAndRefusesUnknownPaths() {
        var script = UpstreamScript(refreshToken: "r", clientID: nil)
        let (reply, record) = script.handle(request("GET", "/status?n=1", headers: ["Host": "[::1]:8080"]), at: .zero)
        #expect(reply.status == 200)
        #expect(record.host == "[::1]:8080")
        #expect(String(decoding: reply.body, as: UTF8.self).contains("Host [::1]:8080"))
        #expect(status(&script, request("GET", "/nope")) == 404)
        #expect(status(&script, request("DELETE", "/search")) == 404)
    }

    @Test func repliesBecomeTheMockServersResponses() {
        let response = UpstreamReply.text(429, "slow down", headers: ["Retry-After": "1"]).response
        #expect(response.status == 429)
        #expect(response.headers == ["Retry-After": "1", "Content-Type": "text/plain; charset=utf-8"])
        #expect(response.bodyBytes == Array("slow down\n".utf8))
    }
}

/// The upstream's I/O owner, from a raw blocking client: real bytes on a real loopback socket.
@Suite(.timeLimit(.minutes(1)), .onBlockingThreads) struct DemoUpstreamTests {
    /// A blocking client socket on 127.0.0.1:`port` whose reads give up after two seconds. Its calls run on a
    /// thread of their own (``blocking(_:)``), never on one of Swift concurrency's few cooperative threads, which
    /// the upstream's own tasks need.
    final class RawClient: @unchecked Sendable {
        struct ConnectFailed: Error {
            var errno: Int32
        }

        let fd: Int32

        init(port: Int) throws {
            // Not `self.fd` until connected: a class whose properties are all set runs its deinit when its
            // init throws, which would close the descriptor a second time.
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw ConnectFailed(errno: errno) }
            // The upstream serves from a task on the cooperative pool, which the full suite on 2 cores has been seen
            // to keep busy for over 2 s (CI, 2026-11-25): wait up to 10 s for it; a passing run takes milliseconds.
            var tv = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else {
                let failure = ConnectFailed(errno: errno)
                close(fd)
                throw failure
            }
            self.fd = fd
        }

        deinit { close(fd) }

        func send(_ text: String) {
            let bytes = Array(text.utf8)
            _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }

        /// Everything until the server closes (closed: true; a reset counts, as closing with unread bytes sends
        /// one) or the read timeout (closed: false), as text.
        func readToEnd() async -> (text: String, closed: Bool) {
            await DemoUpstreamTests.blocking { [self] in
                var out: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                    if n == 0 { return (String(decoding: out, as: UTF8.self), true) }
                    if n < 0 { return (String(decoding: out, as: UTF8.self), errno == ECONNRESET) }
                    out += buffer[..<n]
                }
            }
        }
    }

    /// Runs blocking work on a new thread and resumes with its result.
    static func blocking<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: work()) }.start()
        }
    }

    /// The records the upstream reported through its callback.
    final class Seen: Sendable {
        let records = Mutex<[UpstreamRecord]>([])
        func withLock<T>(_ body: ([UpstreamRecord]) -> T) -> T { records.withLock { body($0) } }
    }

    func start(ioTimeout: Duration = .seconds(5)) async throws -> (DemoUpstream, Seen) {
        let seen = Seen()
        let upstream = try await DemoUpstream.start(
            script: UpstreamScript(refreshToken: "r", clientID: nil), origin: .now, ioTimeout: ioTimeout,
            onRecord: { record in seen.records.withLock { $0.append(record) } }
        )
        return (upstream, seen)
    }

    @Test func answersWithALength() async throws {
        let (upstream, seen) = try await start()
        let client = try RawClient(port: upstream.port)
        client.send("GET /search?q=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        let (text, closed) = await client.readToEnd()
        await upstream.stop()
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(text.contains("Content-Length: 41\r\nConnection: close\r\n\r\n{\"results\""))
        #expect(closed)
        #expect(seen.withLock { $0.map(\.line) } == ["GET /search?q=1"])
        #expect(upstream.records.count == 1)
    }

    @Test func garbageGetsAClearErrorAndTheConnectionCloses() async throws {
        let (upstream, seen) = try await start()
        let client = try RawClient(port: upstream.port)
        client.send("HELLO THERE\r\n\r\n")
        let (text, closed) = await client.readToEnd()
        // The upstream keeps serving after a bad request.
        let next = try RawClient(port: upstream.port)
        next.send("GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let (notFound, _) = await next.readToEnd()
        await upstream.stop()
        #expect(text.hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
        #expect(text.contains("invalid request line"))
        #expect(closed)
        #expect(notFound.hasPrefix("HTTP/1.1 404 "))
        // The server refused the garbage itself: the script saw only the request it could answer.
        #expect(seen.withLock { $0.map(\.status) } == [404])
    }

    @Test func stopEndsIdleAndHalfSentConnectionsAtOnce() async throws {
        // A read timeout far beyond the bound below, so that a loaded machine cannot make waiting for it and
        // closing at once look alike.
        let (upstream, _) = try await start(ioTimeout: .seconds(60))
        let idle = try RawClient(port: upstream.port)
        let halfSent = try RawClient(port: upstream.port)
        halfSent.send("POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly part")
        // Let the upstream accept both (bounded: 200 × 10ms).
        for _ in 0..<200 where upstream.acceptedConnections < 2 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(upstream.acceptedConnections == 2)
        let started = ContinuousClock.now
        await upstream.stop()
        #expect(ContinuousClock.now - started < .seconds(20), "stop() waited for the idle connections' read timeout")
        #expect(await idle.readToEnd() == ("", true))
        #expect(await halfSent.readToEnd() == ("", true))
        #expect(upstream.records.isEmpty)
        // Nothing listens any more.
        #expect(throws: (any Error).self) { try RawClient(port: upstream.port) }
    }
}
