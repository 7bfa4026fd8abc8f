import CourierCore
import CourierCrypto
import CourierTestSupport
import Foundation
import Testing

@Suite(.timeLimit(.minutes(1)), .onBlockingThreads) struct FetchCommandTests {
    func reports(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
    }

    @Test func bodyToStandardOutputAndAReportPerURLInOrder() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        let out = FileManager.default.temporaryDirectory.appending(path: "fetch-\(UUID().uuidString).bin")
        defer { try? FileManager.default.removeItem(at: out) }
        let second = out.appendingPathExtension("2")
        defer { try? FileManager.default.removeItem(at: second) }
        let result = try await CourierProcess.run(
            ["fetch", "-o", out.path, "-o", second.path, peer.url("/bytes/300"), peer.url("/gzip/1000"), "--json-report", "-"]
        )
        #expect(result.status == 0)
        // One -o per URL, as in curl; the second body decoded.
        #expect(try Data(contentsOf: out) == Data((0..<300).map { UInt8($0 % 251) }))
        #expect(try Data(contentsOf: second) == Data((0..<1000).map { UInt8($0 % 251) }))
        #expect(result.stdout.isEmpty)
        let lines = try reports(result.stderr)
        #expect(lines.count == 2)
        #expect(lines[0]["url"] as? String == peer.url("/bytes/300"))
        #expect(lines[0]["status"] as? Int == 200)
        #expect(lines[0]["bodyBytes"] as? Int == 300)
        #expect(lines[0]["bodySHA256"] as? String == SHA256.hex(SHA256.hash((0..<300).map { UInt8($0 % 251) })))
        #expect(lines[0]["error"] is NSNull)
        #expect(lines[0]["attempts"] as? Int == 1)
        let timings = try #require(lines[0]["timings"] as? [String: Any])
        for key in ["dns", "connect", "tls", "ttfb", "total"] { #expect(timings.keys.contains(key), "\(key)") }
        #expect((timings["total"] as? Double ?? 0) > 0)
        #expect((lines[0]["bytesSent"] as? Int ?? 0) > 0)
        #expect((lines[0]["bytesReceived"] as? Int ?? 0) > 300)
        #expect(lines[1]["bodyBytes"] as? Int == 1000)
        let headers = try #require(lines[1]["headers"] as? [[String]])
        #expect(headers.contains(["Content-Encoding", "gzip"]))
    }

    @Test func outputFileIncludeAndDataFromAFile() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        let dir = FileManager.default.temporaryDirectory.appending(path: "fetch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appending(path: "out.bin")
        let result = try await CourierProcess.run(["fetch", "-o", out.path, peer.url("/bytes/70000")])
        #expect(result.status == 0)
        #expect(try Data(contentsOf: out) == Data((0..<70000).map { UInt8($0 % 251) }))
        let input = dir.appending(path: "in.txt")
        try Data("from a file".utf8).write(to: input)
        let echo = try await CourierProcess.run(["fetch", "-i", "-X", "PUT", "-H", "X-Test: yes", "-d", "@\(input.path)", peer.url("/echo")])
        #expect(echo.status == 0)
        #expect(echo.stdout.hasPrefix("HTTP/1.1 200 "))
        #expect(echo.stdout.contains("\"method\": \"PUT\""))
        #expect(echo.stdout.contains("\"body_len\": 11"))
        #expect(echo.stdout.contains("[\"X-Test\", \"yes\"]"))
    }

    /// `-d @-` and `--data-binary @-` read standard input to its end (200,000 bytes: more than a pipe holds).
    @Test func aBodyFromStandardInput() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        let bytes = (0..<200_000).map { UInt8(ascii: "a") + UInt8($0 % 26) }
        let binary = try await CourierProcess.run(["fetch", "--data-binary", "@-", peer.url("/echo")], standardInput: bytes)
        #expect(binary.status == 0, "\(binary.stderr)")
        #expect(binary.stdout.contains("\"body_len\": 200000"), "\(binary.stdout.prefix(300))")
        #expect(binary.stdout.contains(SHA256.hex(SHA256.hash(bytes))))
        // -d drops CR and LF from the contents, as curl does.
        let text = try await CourierProcess.run(["fetch", "-d", "@-", peer.url("/echo")], standardInput: Array("a=1\r\nb=2\n".utf8))
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("\"body_len\": 6"), "\(text.stdout.prefix(300))")
    }

    @Test func curlExitStatuses() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        let notFound = try await CourierProcess.run(["fetch", "--fail", peer.url("/status/404")])
        #expect(notFound.status == 22)
        #expect(notFound.stdout.isEmpty)
        #expect(try await CourierProcess.run(["fetch", peer.url("/status/404")]).status == 0)
        #expect(try await CourierProcess.run(["fetch", peer.url("/redirect/20")]).status == 47)
        #expect(try await CourierProcess.run(["fetch", "--max-time", "0.3", peer.url("/slow/200?delay_ms=10")]).status == 28)
        #expect(try await CourierProcess.run(["fetch", "not a url"]).status == 2)
        #expect(try await CourierProcess.run(["fetch", "--max-time", "-1", peer.url("/")]).status == 2)
        #expect(try await CourierProcess.run(["fetch", "-H", "NoColon", peer.url("/")]).status == 2)
    }

    @Test func connectAndProtocolFailuresAreReported() async throws {
        let refused = try ClosedPort()
        let result = try await CourierProcess.run(["fetch", "--json-report", "-", refused.url("/")])
        #expect(result.status == 7)
        let line = try #require(try reports(result.stderr.split(separator: "\n").filter { $0.hasPrefix("{") }.joined(separator: "\n")).first)
        let error = try #require(line["error"] as? [String: Any])
        #expect(error["kind"] as? String == "connect")
        #expect(line["status"] is NSNull)

        let broken = try ScriptedServer { c in
            c.readRequestHead()
            c.write("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort")
            c.close()
        }
        #expect(try await CourierProcess.run(["fetch", broken.url("/")]).status == 56)
    }
}
