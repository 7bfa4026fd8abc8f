import CourierTestSupport
import Foundation
import Testing

/// `courier fetch -C` as curl's: the rest of a file from nginx's real byte ranges, appended; a 416 for a whole
/// file is done; a server that ignores the range is exit 33 with the file untouched.
@Suite(.timeLimit(.minutes(1)), .onBlockingThreads) struct FetchContinueAtTests {
    static let file = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 9) }

    static func contents(_ path: String) -> [UInt8] {
        (try? Data(contentsOf: URL(fileURLWithPath: path))).map { Array($0) } ?? []
    }

    static func write(_ bytes: some Sequence<UInt8>, to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    @Test func continueAtTheFilesEndAppendsTheRestFromNginx() async throws {
        let nginx = try await NginxServer.start()
        try nginx.serve("blob.bin", Self.file)
        let files = try FetchTestFiles()
        defer { files.remove() }
        let partial = files.path("partial")
        try Self.write(Self.file[..<123_456], to: partial)
        let resumed = try await CourierProcess.run(["fetch", "-C", "-", "-o", partial, nginx.url("/blob.bin")])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(Self.contents(partial) == Self.file)
        // Already whole: nginx answers 416, which is done (the file stays as it is).
        let whole = try await CourierProcess.run(["fetch", "-C", "-", "--fail", "-o", partial, nginx.url("/blob.bin")])
        #expect(whole.status == 0, "\(whole.stderr)")
        #expect(Self.contents(partial) == Self.file)
        // No file yet: the whole body, from its first byte.
        let fresh = try await CourierProcess.run(["fetch", "-C", "-", "-o", files.path("fresh"), nginx.url("/blob.bin")])
        #expect(fresh.status == 0)
        #expect(Self.contents(files.path("fresh")) == Self.file)
        // An explicit offset, and through a policy's data loader the same.
        let explicit = files.path("explicit")
        try Self.write(Self.file[..<1000], to: explicit)
        #expect(try await CourierProcess.run(["fetch", "-C", "1000", "-o", explicit, nginx.url("/blob.bin")]).status == 0)
        #expect(Self.contents(explicit) == Self.file)
        let policy = try files.write("policy.yaml", FetchTestFiles.sendOncePolicy)
        let loaded = files.path("loaded")
        try Self.write(Self.file[..<200_000], to: loaded)
        #expect(try await CourierProcess.run(["fetch", "--policy", policy, "-C", "-", "-o", loaded, nginx.url("/blob.bin")]).status == 0)
        #expect(Self.contents(loaded) == Self.file)
    }

    @Test func aServerThatIgnoresTheRangeIsExit33AndTheFileIsUntouched() async throws {
        let server = try RecordingServer { _, request in
            switch request.path {
            case "/five": RecordingServer.Reply(status: 200, body: "12345")
            default: RecordingServer.Reply(status: 200, body: "a whole new body")
            }
        }
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        let partial = try files.write("partial", "12345")
        let refused = try await CourierProcess.run(["fetch", "-C", "-", "-o", partial, server.url("/other")])
        #expect(refused.status == 33)
        #expect(refused.stderr.contains("HTTP server doesn't seem to support byte ranges. Cannot resume."))
        #expect(try files.read("partial") == "12345")
        #expect(server.requests.last?.header("Range") == "bytes=5-")
        // A 200 whose length is the offset: the file is already whole (curl's "the entire document is already downloaded").
        #expect(try await CourierProcess.run(["fetch", "-C", "-", "-o", partial, server.url("/five")]).status == 0)
        #expect(try files.read("partial") == "12345")
    }

    @Test func continueAtNeedsAFileOrAnOffset() async throws {
        let dash = try await CourierProcess.run(["fetch", "-C", "-", "http://127.0.0.1:9/"])
        #expect(dash.status == 2)
        #expect(dash.stderr.contains("-C - continues the -o file where it ends"))
        let bad = try await CourierProcess.run(["fetch", "-C", "x", "-o", "/tmp/x", "http://127.0.0.1:9/"])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("-C takes a byte offset"))
        // -r's Range and -C's would fight over one field.
        let both = try await CourierProcess.run(["fetch", "-C", "10", "-r", "0-5", "-o", "/tmp/x", "http://127.0.0.1:9/"])
        #expect(both.status == 2)
        #expect(both.stderr.contains("give one of them"), "\(both.stderr)")
    }
}
