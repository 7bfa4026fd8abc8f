import CourierCore
import CourierTestSupport
import Foundation
import Testing

/// `courier fetch` with several URLs: one client or loader, in order or `--parallel N`, outputs and reports in
/// the order given, `-o` per URL.
@Suite(.timeLimit(.minutes(1)), .onBlockingThreads) struct FetchSeveralURLsTests {
    /// A server whose body for `/name` is `name;` and which answers `/slow-MS/name` after MS milliseconds.
    static func echoServer() throws -> RecordingServer {
        try RecordingServer { _, request in
            let parts = request.path.split(separator: "/")
            var reply = RecordingServer.Reply(body: "\(parts.last ?? "");")
            if let first = parts.first, first.hasPrefix("slow-"), let ms = Int(first.dropFirst(5)) {
                reply.delay = .milliseconds(ms)
            }
            return reply
        }
    }

    @Test func severalURLsRunInOrderWithTheirReportsInOrder() async throws {
        let server = try Self.echoServer()
        defer { server.stop() }
        let names = ["a", "b", "c", "d"]
        let urls = names.map { server.url("/v1/\($0)") }
        let result = try await CourierProcess.run(["fetch", "--json-report", "-"] + urls)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "a;b;c;d;")
        let reports = try FetchTestFiles.reports(result.stderr)
        #expect(reports.map { $0["url"] as? String } == urls)
        #expect(reports.allSatisfy { $0["status"] as? Int == 200 && $0["attempts"] as? Int == 1 })
        // One after another: the server saw them in the order given, on one kept-alive connection.
        #expect(server.requests.map(\.path) == names.map { "/v1/\($0)" })
        #expect(server.maxInFlight == 1)
    }

    @Test(arguments: [false, true])
    func parallelFourOverEightURLsOverlapsAndKeepsTheGivenOrder(withPolicy: Bool) async throws {
        let server = try Self.echoServer()
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        // Later URLs answer sooner (650 ms down to 300 ms), so they finish out of order; one after another they
        // would take 3.8 s, four at a time about 1 s.
        let urls = (0..<8).map { server.url("/slow-\(300 + (7 - $0) * 50)/u\($0)") }
        var arguments = ["fetch", "--parallel", "4", "--json-report", "-"]
        if withPolicy {
            arguments += ["--policy", try files.write("policy.yaml", "version: 1\nservices:\n  local:\n    hosts: [127.0.0.1]\n    scheme: http\n")]
        }
        let result = try await CourierProcess.run(arguments + urls)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == (0..<8).map { "u\($0);" }.joined(), "bodies out of order or interleaved")
        let reports = try FetchTestFiles.reports(result.stderr)
        #expect(reports.map { $0["url"] as? String } == urls)
        #expect(reports.allSatisfy { $0["status"] as? Int == 200 })
        // Measured at the server, so the client's start-up on a loaded machine does not count.
        let busy = try #require(server.busySpan).seconds
        #expect(busy < 2.6, "8 URLs, 4 at a time, kept the server busy \(busy) s (3.8 s one after another)")
        #expect((2...4).contains(server.maxInFlight), "the server answered \(server.maxInFlight) at once")
    }

    @Test func eachOutputOptionIsForOneURLAndTheRestGoToStandardOutput() async throws {
        let server = try Self.echoServer()
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        let one = try await CourierProcess.run(
            ["fetch", "-o", files.path("1"), "-o", "-", "-o", files.path("3")]
                + ["a", "b", "c", "d"].map { server.url("/v1/\($0)") }
        )
        #expect(one.status == 0, "\(one.stderr)")
        #expect(try files.read("1") == "a;")
        #expect(try files.read("3") == "c;")
        #expect(one.stdout == "b;d;")

        // A file named twice gets both bodies in URL order, even when the first finishes last.
        let two = try await CourierProcess.run(
            ["fetch", "--parallel", "3", "-o", files.path("shared"), "-o", files.path("shared")]
                + [server.url("/slow-400/first"), server.url("/slow-10/second"), server.url("/slow-10/third")]
        )
        #expect(two.status == 0, "\(two.stderr)")
        #expect(try files.read("shared") == "first;second;")
        #expect(two.stdout == "third;")
    }

    @Test func theExitStatusIsTheFirstFailingURLsInTheOrderGiven() async throws {
        let server = try RecordingServer { _, request in
            request.path.hasSuffix("404") ? RecordingServer.Reply(status: 404, body: "missing", delay: .milliseconds(300)) : RecordingServer.Reply()
        }
        defer { server.stop() }
        let refused = try ClosedPort()
        // The 404 (exit 22 with --fail) finishes after the refused connect (exit 7), but comes first in the list.
        let result = try await CourierProcess.run(
            ["fetch", "--fail", "--parallel", "3", "--json-report", "-", server.url("/ok"), server.url("/404"), refused.url("/")]
        )
        #expect(result.status == 22, "\(result.stderr)")
        #expect(result.stdout == "ok")
        let reports = try FetchTestFiles.reports(result.stderr)
        #expect(reports.map { $0["status"] as? Int } == [200, 404, nil])
        #expect((reports.last?["error"] as? [String: Any])?["kind"] as? String == "connect")
    }

    @Test func badOptionsAreUsageErrorsBeforeAnyRequest() async throws {
        let server = try Self.echoServer()
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        for arguments in [
            ["--parallel", "0"], ["--parallel", "257"], ["--parallel", "many"],
            ["-o", files.path("a"), "-o", files.path("b")],
            ["-o", files.directory.appending(path: "no/such/dir/file").path],
        ] {
            let result = try await CourierProcess.run(["fetch"] + arguments + [server.url("/v1/a")])
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(!result.stderr.isEmpty, "\(arguments)")
        }
        let tooMany = try await CourierProcess.run(["fetch", "-o", files.path("a"), "-o", files.path("b"), server.url("/v1/a")])
        #expect(tooMany.stderr.contains("2 -o options for 1 URL"))
        #expect(server.requests.isEmpty)
    }
}
