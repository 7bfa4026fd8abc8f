import CourierTestSupport
import Foundation
import Testing

/// What curl users type from habit (issue 25): curl's short options and their combined forms, the version
/// received under `-i`, `--max-time 0`, file errors that say why, and `-v` lines as curl's.
@Suite(.timeLimit(.minutes(1)), .onBlockingThreads) struct FetchCurlHabitsTests {
    static func server() throws -> RecordingServer {
        try RecordingServer { _, request in
            request.path == "/missing" ? RecordingServer.Reply(status: 404, reason: "Not Found", body: "nope") : RecordingServer.Reply(body: "fine")
        }
    }

    @Test func silentShowErrorFailAndLocationCombined() async throws {
        let server = try Self.server()
        defer { server.stop() }
        // -sSfL: argument-parser splits the cluster; --fail refuses the 404 and -S still says so.
        let combined = try await CourierProcess.run(["fetch", "-sSfL", server.url("/missing")])
        #expect(combined.status == 22, "\(combined.stderr)")
        #expect(combined.stdout.isEmpty)
        #expect(combined.stderr.contains("404"), "\(combined.stderr)")
        // -sf: the same status, and nothing said.
        let silent = try await CourierProcess.run(["fetch", "-sf", server.url("/missing")])
        #expect(silent.status == 22)
        #expect(silent.stderr.isEmpty, "\(silent.stderr)")
        // -f alone: as --fail.
        let fail = try await CourierProcess.run(["fetch", "-f", server.url("/missing")])
        #expect(fail.status == 22)
        #expect(fail.stderr.contains("404"))
        let fine = try await CourierProcess.run(["fetch", "-sSfL", server.url("/ok")])
        #expect(fine.status == 0)
        #expect(fine.stdout == "fine")
        #expect(server.requests.count == 4)

        let refused = try ClosedPort()
        let quiet = try await CourierProcess.run(["fetch", "-s", refused.url("/")])
        #expect(quiet.status == 7)
        #expect(quiet.stderr.isEmpty, "\(quiet.stderr)")
        let shown = try await CourierProcess.run(["fetch", "-sS", refused.url("/")])
        #expect(shown.status == 7)
        #expect(shown.stderr.contains("connect"), "\(shown.stderr)")
    }

    @Test func headSendsHEADAndPrintsTheHeadOnly() async throws {
        let server = try Self.server()
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        for extra in [[], ["--policy", try files.write("policy.yaml", FetchTestFiles.sendOncePolicy)]] {
            let result = try await CourierProcess.run(["fetch", "-I"] + extra + [server.url("/ok")])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(server.requests.last?.requestLine == "HEAD /ok HTTP/1.1", "\(extra)")
            #expect(result.stdout.hasPrefix("HTTP/1.1 200 Scripted\r\n"), "\(result.stdout)")
            #expect(result.stdout.hasSuffix("\r\n\r\n"), "\(extra): no body after the head: \(result.stdout)")
        }
        let both = try await CourierProcess.run(["fetch", "-I", "-d", "x", server.url("/ok")])
        #expect(both.status == 2)
        #expect(both.stderr.contains("-I sends HEAD"), "\(both.stderr)")
        #expect(server.requests.count == 2)
    }

    @Test func remoteNameNamesTheFileAfterTheURLsLastSegment() async throws {
        let server = try Self.server()
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        let result = try await CourierProcess.run(["fetch", "-O", server.url("/dir/report.txt?x=1")], in: files.directory)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try files.read("report.txt") == "fine")
        #expect(result.stdout.isEmpty)
        // -O twice: one file per URL, as -o.
        let two = try await CourierProcess.run(["fetch", "-OO", server.url("/a.txt"), server.url("/b.txt")], in: files.directory)
        #expect(two.status == 0, "\(two.stderr)")
        #expect(try files.read("a.txt") == "fine" && files.read("b.txt") == "fine")
        let before = server.requests.count
        // No file name in the path: refused before any request, as curl refuses it (exit 23).
        for url in [server.url("/dir/"), server.url("/")] {
            let none = try await CourierProcess.run(["fetch", "-O", url], in: files.directory)
            #expect(none.status == 23, "\(url): \(none.stderr)")
            #expect(none.stderr.contains("has no file name at the end of its path"), "\(none.stderr)")
            #expect(!none.stderr.contains("Usage:"))
        }
        #expect(server.requests.count == before)
        let mixed = try await CourierProcess.run(["fetch", "-O", "-o", "x", server.url("/a.txt")], in: files.directory)
        #expect(mixed.status == 2)
    }

    @Test func includePrintsTheVersionTheServerSent() async throws {
        let server = try ScriptedServer { c in
            while c.readRequestHead() != nil { c.write("HTTP/1.0 200 Old\r\nContent-Length: 2\r\n\r\nhi") }
        }
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        let policy = try files.write("policy.yaml", FetchTestFiles.sendOncePolicy)
        for extra in [[], ["--policy", policy]] {
            let result = try await CourierProcess.run(["fetch", "-i"] + extra + [server.url("/old")])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.hasPrefix("HTTP/1.0 200 Old\r\n"), "\(extra): \(result.stdout)")
            #expect(result.stdout.hasSuffix("\r\n\r\nhi"))
        }
    }

    @Test func maxTimeZeroIsNoLimitAndANegativeOneSaysWhatIsWrong() async throws {
        let server = try Self.server()
        defer { server.stop() }
        let none = try await CourierProcess.run(["fetch", "--max-time", "0", server.url("/ok")])
        #expect(none.status == 0, "\(none.stderr)")
        #expect(none.stdout == "fine")
        for given in ["-1", "-0.5"] {
            let negative = try await CourierProcess.run(["fetch", "--max-time", given, server.url("/ok")])
            #expect(negative.status == 2)
            #expect(negative.stderr.contains("--max-time takes a number of seconds, 0 or more (0: no limit), not \(given)"), "\(negative.stderr)")
            #expect(!negative.stderr.contains("Missing value"))
            // A usage error: the subcommand's usage follows.
            #expect(negative.stderr.contains("Usage: courier fetch"), "\(negative.stderr)")
        }
        #expect(server.requests.count == 1)
    }

    @Test func fileErrorsSayWhyAndShowNoUsage() async throws {
        let server = try Self.server()
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        let cases: [([String], String)] = [
            (["-o", "nodir/x.txt"], "courier fetch: cannot write nodir/x.txt: No such file or directory\n"),
            (["-o", "."], "courier fetch: cannot write .: Is a directory\n"),
            (["-d", "@missing.txt"], "courier fetch: cannot read missing.txt: No such file or directory\n"),
            (["--cacert", "missing.pem"], "courier fetch: --cacert: cannot read missing.pem: No such file or directory\n"),
            (["--json-report", "nodir/r.json"], "courier fetch: cannot write the report to nodir/r.json: No such file or directory\n"),
        ]
        for (options, message) in cases {
            let result = try await CourierProcess.run(["fetch"] + options + [server.url("/ok")], in: files.directory)
            #expect(result.status == 2, "\(options)")
            #expect(result.stderr == message, "\(options): \(result.stderr)")
        }
        // -s leaves the reason out, as curl does; -sS says it.
        let silent = try await CourierProcess.run(["fetch", "-s", "-o", "nodir/x.txt", server.url("/ok")], in: files.directory)
        #expect(silent.status == 2)
        #expect(silent.stderr.isEmpty, "\(silent.stderr)")
        let shown = try await CourierProcess.run(["fetch", "-sS", "-o", "nodir/x.txt", server.url("/ok")], in: files.directory)
        #expect(shown.stderr == cases[0].1, "\(shown.stderr)")
        #expect(server.requests.isEmpty)
    }

    @Test func verboseShowsTheConnectionAndBothHeadsAsCurlDoes() async throws {
        let server = try Self.server()
        defer { server.stop() }
        let result = try await CourierProcess.run(["fetch", "-v", "-H", "X-Mine: 1", server.url("/ok")])
        #expect(result.status == 0, "\(result.stderr)")
        let port = try #require(URLComponents(string: server.url("/"))?.port)
        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let expectedOrder = [
            "* Connected to 127.0.0.1 (127.0.0.1) port \(port)", "> GET /ok HTTP/1.1", "> Host: 127.0.0.1:\(port)",
            "> X-Mine: 1", ">", "< HTTP/1.1 200 Scripted", "< Content-Length: 4", "<",
        ]
        var position = 0
        for line in lines where position < expectedOrder.count && line == expectedOrder[position] { position += 1 }
        #expect(position == expectedOrder.count, "missing or out of order from '\(expectedOrder[min(position, expectedOrder.count - 1)])': \(result.stderr)")

        // With a policy: the loader's decisions and the same wire lines; with two URLs each line says which.
        let files = try FetchTestFiles()
        defer { files.remove() }
        let policy = try files.write("policy.yaml", FetchTestFiles.sendOncePolicy)
        let traced = try await CourierProcess.run(["fetch", "-v", "--policy", policy, server.url("/ok"), server.url("/missing")])
        #expect(traced.status == 0, "\(traced.stderr)")
        #expect(traced.stderr.contains("#1 attempt 1: sending to 127.0.0.1:\(port)"), "\(traced.stderr)")
        #expect(traced.stderr.contains("#1 > GET /ok HTTP/1.1\n"), "\(traced.stderr)")
        #expect(traced.stderr.contains("#2 > GET /missing HTTP/1.1\n"), "\(traced.stderr)")
        #expect(traced.stderr.contains("#2 < HTTP/1.1 404 Not Found\n"), "\(traced.stderr)")
        // The second URL reuses the first one's connection.
        #expect(traced.stderr.contains("#2 * Re-using the connection to 127.0.0.1 port \(port)"), "\(traced.stderr)")
    }
}
