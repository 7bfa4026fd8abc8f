import CourierCrypto
import CourierTestSupport
import Foundation
import Testing

/// `courier fetch` with `data:` and `file://` URLs, as curl takes them, and `-r/--range` for http and file:
/// `-o`, `-i` and `--json-report` work as for http; a 206 is the answer, written with no error.
@Suite(.timeLimit(.minutes(1)), .onBlockingThreads) struct FetchProtocolTests {
    @Test func dataURLsWithOutputHeadAndReport() async throws {
        let files = try FetchTestFiles()
        defer { files.remove() }
        let plain = try await CourierProcess.run(["fetch", "data:,A%20brief%20note"])
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plain.stdout == "A brief note")

        let out = files.path("hello.txt")
        let saved = try await CourierProcess.run(["fetch", "-o", out, "--json-report", "-", "data:text/plain;base64,SGVsbG8="])
        #expect(saved.status == 0, "\(saved.stderr)")
        #expect(try files.read("hello.txt") == "Hello")
        let report = try #require(try FetchTestFiles.reports(saved.stderr).first)
        #expect(report["url"] as? String == "data:text/plain;base64,SGVsbG8=")
        #expect(report["status"] as? Int == 200)
        #expect(report["bodyBytes"] as? Int == 5)
        #expect(report["bodySHA256"] as? String == SHA256.hex(SHA256.hash(Array("Hello".utf8))))
        #expect(report["error"] is NSNull)
        #expect(report["tls"] is NSNull)

        let head = try await CourierProcess.run(["fetch", "-i", "data:application/json,%7B%7D"])
        #expect(head.stdout.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(head.stdout)")
        #expect(head.stdout.contains("Content-Type: application/json\r\n"))
        #expect(head.stdout.hasSuffix("\r\n\r\n{}"))

        let bad = try await CourierProcess.run(["fetch", "--json-report", "-", "data:;base64,!!!"])
        #expect(bad.status == 37, "\(bad.stderr)")
        #expect(bad.stderr.contains("base64"), "\(bad.stderr)")
        let badReport = try #require(try FetchTestFiles.reports(bad.stderr).first)
        #expect((badReport["error"] as? [String: Any])?["kind"] as? String == "protocol-plugin")

        // Other schemes are still refused before anything is sent.
        let ftp = try await CourierProcess.run(["fetch", "ftp://example.com/x"])
        #expect(ftp.status == 2)
        #expect(ftp.stderr.contains("is not an absolute http or https URL"), "\(ftp.stderr)")
    }

    @Test func fileURLsWholeRangedMissingAndADirectory() async throws {
        let files = try FetchTestFiles()
        defer { files.remove() }
        let source = try files.write("digits.txt", "0123456789")
        let whole = try await CourierProcess.run(["fetch", "file://" + source])
        #expect(whole.status == 0, "\(whole.stderr)")
        #expect(whole.stdout == "0123456789")
        let range = try await CourierProcess.run(["fetch", "-i", "-r", "2-4", "file://" + source])
        #expect(range.status == 0, "\(range.stderr)")
        #expect(range.stdout.hasPrefix("HTTP/1.1 206 Partial Content\r\n"), "\(range.stdout)")
        #expect(range.stdout.contains("Content-Range: bytes 2-4/10\r\n"))
        #expect(range.stdout.hasSuffix("\r\n\r\n234"))
        let suffix = try await CourierProcess.run(["fetch", "--range", "-3", "file://" + source])
        #expect(suffix.stdout == "789")
        let open = try await CourierProcess.run(["fetch", "-r", "8-", "--json-report", "-", "file://" + source])
        #expect(open.stdout == "89")
        #expect(try FetchTestFiles.reports(open.stderr).first?["status"] as? Int == 206)
        let beyond = try await CourierProcess.run(["fetch", "-f", "-r", "10-", "file://" + source])
        #expect(beyond.status == 22, "416 is an answer, refused by --fail: \(beyond.stderr)")

        let missing = try await CourierProcess.run(["fetch", "file://" + files.path("nope.txt")])
        #expect(missing.status == 37)
        #expect(missing.stderr.contains("no such file"), "\(missing.stderr)")
        let directory = try await CourierProcess.run(["fetch", "file://" + files.directory.path])
        #expect(directory.status == 37)
        #expect(directory.stderr.contains("is a directory"), "\(directory.stderr)")

        let bad = try await CourierProcess.run(["fetch", "-r", "5-2", "file://" + source])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("-r takes"), "\(bad.stderr)")
    }

    @Test func rangeOverHTTPSendsTheFieldAndDeliversThe206() async throws {
        let server = try RecordingServer { _, request in
            guard let range = request.header("Range") else { return RecordingServer.Reply(body: "0123456789") }
            return RecordingServer.Reply(
                status: 206, reason: "Partial Content", headers: [("Content-Range", "bytes 0-4/10"), ("X-Asked", range)], body: "01234"
            )
        }
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        let out = files.path("part.bin")
        let result = try await CourierProcess.run(["fetch", "-r", "0-4", "-o", out, "--json-report", "-", server.url("/file")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try files.read("part.bin") == "01234")
        #expect(server.requests.last?.header("Range") == "bytes=0-4")
        #expect(try FetchTestFiles.reports(result.stderr).first?["status"] as? Int == 206)
        // A comma list is sent as given; with a policy (the data loader) too.
        let policy = try files.write("policy.yaml", FetchTestFiles.sendOncePolicy)
        let list = try await CourierProcess.run(["fetch", "--policy", policy, "-r", "0-0,-1", server.url("/file")])
        #expect(list.status == 0, "\(list.stderr)")
        #expect(server.requests.last?.header("Range") == "bytes=0-0,-1")
        #expect(list.stdout == "01234")
    }
}
