import CourierCore
import CourierCrypto
@testable import CourierKit
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// `multipart/form-data` bodies (RFC 7578), sent through the loader to a loopback server and read back by an
/// independent parser (Python's `email` package), byte for byte.
@Suite struct MultipartFormDataTests {
    static func parse(_ body: [UInt8], contentType: String) throws -> PythonMultipartParser.Parsed {
        try PythonMultipartParser.parse(body, contentType: contentType)
    }

    static func sha256(_ bytes: [UInt8]) -> String {
        SHA256.hash(bytes).map { String(format: "%02x", $0) }.joined()
    }

    /// A temporary file of `count` pseudo-random bytes (the caller removes it).
    static func file(_ count: Int) throws -> (path: String, bytes: [UInt8]) {
        var random = SplitMix64(seed: UInt64(count))
        let bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        let path = NSTemporaryDirectory() + "courier-multipart-\(UUID().uuidString).bin"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return (path, bytes)
    }

    func service(retrying: Bool = false) throws -> DataLoaderService {
        try makeService("""
            version: 1
            services:
              local:
                hosts: [127.0.0.1]
                scheme: http
                retry: { max-attempts: \(retrying ? 2 : 1), on: [503], methods: [POST], idempotency-key: Idempotency-Key, backoff: { initial: 1ms, jitter: none } }
            """)
    }

    @Test func knownSizesAreSentWithContentLengthAndPythonReadsEveryPart() async throws {
        let (path, bytes) = try Self.file(300_000)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let server = try RecordingServer()
        defer { server.stop() }
        var form = MultipartFormData()
        form.append("Holiday in Åre", name: "title")
        form.append(Array("a,b\n1,2\n".utf8), name: "table", filename: "we\"ird\nname.csv", contentType: "text/csv")
        try form.appendFile(at: path, name: "photo", contentType: "image/jpeg")
        let response = try await service().makeFactory().makeLoader().load(Request(url: server.url("/v1/upload"), form: form))
        #expect(response.status == 200)
        let request = try #require(server.requests.first)
        #expect(request.requestLine.hasPrefix("POST /v1/upload "))
        #expect(request.header("Content-Length") == String(try #require(form.length)))
        #expect(request.header("Transfer-Encoding") == nil)
        #expect(request.body.count == form.length)
        let contentType = try #require(request.header("Content-Type"))
        #expect(contentType == form.contentType)
        let parsed = try Self.parse(request.body, contentType: contentType)
        #expect(parsed.multipart && parsed.defects.isEmpty, "\(parsed.defects)")
        #expect(parsed.parts == [
            PythonMultipartParser.Part(name: "title", filename: nil, content_type: nil, size: 15, sha256: Self.sha256(Array("Holiday in Åre".utf8))),
            PythonMultipartParser.Part(name: "table", filename: "we%22ird%0Aname.csv", content_type: "text/csv", size: 8, sha256: Self.sha256(Array("a,b\n1,2\n".utf8))),
            PythonMultipartParser.Part(name: "photo", filename: (path as NSString).lastPathComponent, content_type: "image/jpeg", size: bytes.count, sha256: Self.sha256(bytes)),
        ])
    }

    @Test func aPartOfUnknownLengthMakesTheBodyChunked() async throws {
        let server = try RecordingServer()
        defer { server.stop() }
        var form = MultipartFormData()
        form.append("one", name: "a")
        form.append(RequestBodyStream {
            AsyncThrowingStream { continuation in
                for n in 0..<5 { continuation.yield(Array("line \(n)\n".utf8)) }
                continuation.finish()
            }
        }, name: "log", filename: "log.txt", contentType: "text/plain")
        #expect(form.length == nil)
        _ = try await service().makeFactory().makeLoader().load(Request(url: server.url("/v1/upload"), form: form))
        let request = try #require(server.requests.first)
        #expect(request.header("Transfer-Encoding") == "chunked")
        #expect(request.header("Content-Length") == nil)
        let parsed = try Self.parse(request.body, contentType: try #require(request.header("Content-Type")))
        #expect(parsed.defects.isEmpty)
        #expect(parsed.parts.map(\.name) == ["a", "log"])
        #expect(parsed.parts.last?.size == 35)
    }

    /// A retried attempt sends the whole form again, re-opening its file.
    @Test func aRetryReopensTheFilesAndSendsTheFormAgain() async throws {
        let (path, bytes) = try Self.file(200_000)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let server = try RecordingServer { index, _ in index == 0 ? RecordingServer.Reply(status: 503) : RecordingServer.Reply() }
        defer { server.stop() }
        var form = MultipartFormData()
        try form.appendFile(at: path, name: "f")
        let response = try await service(retrying: true).makeFactory().makeLoader().load(Request(url: server.url("/v1/up"), form: form))
        #expect(response.status == 200)
        #expect(response.attempts == 2)
        let bodies = server.requests.map(\.body)
        #expect(bodies.count == 2)
        #expect(bodies[0] == bodies[1])
        #expect(try Self.parse(bodies[1], contentType: form.contentType).parts.first?.sha256 == Self.sha256(bytes))
    }

    /// A large file is read as it is sent, in chunks, never whole.
    @Test func aLargeFileIsStreamedInChunks() async throws {
        let (path, _) = try Self.file(8 << 20)
        defer { try? FileManager.default.removeItem(atPath: path) }
        var form = MultipartFormData()
        try form.appendFile(at: path, name: "big")
        var (total, largest) = (0, 0)
        for try await chunk in try form.bodyStream().makeStream() {
            total += chunk.count
            largest = max(largest, chunk.count)
        }
        #expect(total == form.length)
        #expect(largest <= 64 * 1024)
    }

    @Test func aMissingFileAndAFileThatChangedAreClearErrors() async throws {
        var form = MultipartFormData()
        #expect(throws: MultipartError(.unreadableFile(path: "/nonexistent/x.bin", reason: "'stat' failed: (2) No such file or directory"))) {
            try form.appendFile(at: "/nonexistent/x.bin", name: "x")
        }
        let (path, _) = try Self.file(1_000)
        defer { try? FileManager.default.removeItem(atPath: path) }
        try form.appendFile(at: path, name: "x")
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: path))
        await #expect(throws: MultipartError(.fileChanged(path: path))) {
            for try await _ in try form.bodyStream().makeStream() {}
        }
    }

    @Test func theBoundaryInAPartIsRefusedEvenSplitAcrossChunks() async throws {
        var form = MultipartFormData(boundary: "XYZ")
        form.append("before --XYZ after", name: "text")
        #expect(throws: MultipartError(.boundaryInContent(part: "text"))) { try form.bodyStream() }

        var streamed = MultipartFormData(boundary: "XYZ")
        streamed.append(RequestBodyStream {
            AsyncThrowingStream { continuation in
                continuation.yield(Array("data --X".utf8))
                continuation.yield(Array("YZ more".utf8))
                continuation.finish()
            }
        }, name: "s")
        await #expect(throws: MultipartError(.boundaryInContent(part: "s"))) {
            for try await _ in try streamed.bodyStream().makeStream() {}
        }
    }
}
