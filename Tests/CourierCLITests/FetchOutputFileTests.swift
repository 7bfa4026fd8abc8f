import CourierTestSupport
import Foundation
import Testing

/// `-o` files as curl writes them: created only when there is something to write, and (unlike curl) never left
/// with a partial body.
@Suite(.timeLimit(.minutes(1)), .onBlockingThreads) struct FetchOutputFileTests {
    @Test func anOutputFileIsWrittenOnlyWhenThereIsABody() async throws {
        let server = try RecordingServer { _, request in
            switch request.path {
            case "/missing": RecordingServer.Reply(status: 404, body: "not here")
            case "/unchanged": RecordingServer.Reply(status: 304, body: "")
            case "/empty": RecordingServer.Reply(status: 200, body: "")
            default: RecordingServer.Reply(status: 200, body: "fresh")
            }
        }
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        let exists = { (name: String) in FileManager.default.fileExists(atPath: files.path(name)) }

        let failed = try await CourierProcess.run(["fetch", "--fail", "-o", files.path("404"), server.url("/missing")])
        #expect(failed.status == 22)
        #expect(!exists("404"))
        // An existing file is left as it was.
        _ = try files.write("kept", "old copy")
        #expect(try await CourierProcess.run(["fetch", "--fail", "-o", files.path("kept"), server.url("/missing")]).status == 22)
        #expect(try await CourierProcess.run(["fetch", "-o", files.path("kept"), server.url("/unchanged")]).status == 0)
        #expect(try files.read("kept") == "old copy")
        #expect(try await CourierProcess.run(["fetch", "-o", files.path("304"), server.url("/unchanged")]).status == 0)
        #expect(!exists("304"))
        // A complete transfer with an empty body leaves an empty file; one with a body, the body.
        #expect(try await CourierProcess.run(["fetch", "-o", files.path("empty"), server.url("/empty")]).status == 0)
        #expect(try files.read("empty") == "")
        #expect(try await CourierProcess.run(["fetch", "-o", files.path("kept"), server.url("/fresh")]).status == 0)
        #expect(try files.read("kept") == "fresh")
        // Through a policy the same.
        let policy = try files.write("policy.yaml", FetchTestFiles.sendOncePolicy)
        let loaded = try await CourierProcess.run(["fetch", "--policy", policy, "--fail", "-o", files.path("p404"), server.url("/missing")])
        #expect(loaded.status == 22)
        #expect(!exists("p404"))
    }

    @Test func aTransferCutShortLeavesNoPartialFile() async throws {
        // 10 bytes of a 100-byte body, then silence: the --max-time deadline passes mid-body.
        let server = try ScriptedServer { c in
            while let head = c.readRequestHead() {
                if head.hasPrefix("GET /whole") {
                    c.write("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nwhole")
                } else {
                    c.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")
                    _ = c.readsEOF()
                    return
                }
            }
        }
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        let alone = try await CourierProcess.run(["fetch", "--max-time", "0.5", "-o", files.path("cut"), server.url("/stall")])
        #expect(alone.status == 28, "\(alone.stderr)")
        #expect(!FileManager.default.fileExists(atPath: files.path("cut")))
        // A file shared with an earlier URL keeps that URL's body and loses only the cut one.
        let shared = try await CourierProcess.run(
            ["fetch", "--max-time", "0.5", "-o", files.path("shared"), "-o", files.path("shared"), server.url("/whole"), server.url("/stall")]
        )
        #expect(shared.status == 28, "\(shared.stderr)")
        #expect(try files.read("shared") == "whole")
    }

    /// A write that fails (here over a file-size limit, as a full disk would) is a clear error and curl's exit 23,
    /// not a crash; standard output likewise.
    @Test func aWriteThatFailsExits23WithTheReason() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        let dir = FileManager.default.temporaryDirectory.appending(path: "fetch-limit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appending(path: "big.bin")
        // ulimit -f counts 1,024-byte blocks in bash: 16 KiB may be written, the body is 200,000 bytes.
        let toFile = try await Self.runLimited(["fetch", "-o", out.path, peer.url("/bytes/200000")], in: dir)
        #expect(toFile.status == 23, "\(toFile.stderr)")
        #expect(toFile.stderr.contains("writing \(out.path) failed: File too large"), "\(toFile.stderr)")
        let toStandardOutput = try await Self.runLimited(["fetch", peer.url("/bytes/200000")], in: dir, stdoutFile: dir.appending(path: "stdout.bin"))
        #expect(toStandardOutput.status == 23, "\(toStandardOutput.stderr)")
        #expect(toStandardOutput.stderr.contains("writing to standard output failed: File too large"), "\(toStandardOutput.stderr)")
    }

    /// Runs `courier ARGS` under bash with `ulimit -f 16`, standard output into `stdoutFile` (or discarded).
    static func runLimited(_ arguments: [String], in dir: URL, stdoutFile: URL? = nil) async throws -> (status: Int32, stderr: String) {
        let redirect = stdoutFile.map { " > '\($0.path)'" } ?? " > /dev/null"
        let process = try ChildProcess(
            "/bin/bash", ["-c", "ulimit -f 16; exec \"$0\" \"$@\"" + redirect, CourierProcess.binary.path] + arguments,
            directory: dir.path, stderr: .pipe
        )
        let text = try PipeReader.readToEnd(process.standardError!)
        return (await process.termination().status, text)
    }
}
