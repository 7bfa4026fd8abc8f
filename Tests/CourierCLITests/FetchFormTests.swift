import CourierTestSupport
import Foundation
import Testing

/// `courier fetch -F` as curl's: text fields, files streamed with their type and name, a file's text as a field,
/// with and without a policy, read back by Python's `email` parser.
@Suite(.timeLimit(.minutes(1)), .onBlockingThreads) struct FetchFormTests {
    static func sha256(_ bytes: [UInt8]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["sha256sum"]
        let input = Pipe(), output = Pipe()
        (process.standardInput, process.standardOutput) = (input, output)
        try process.run()
        input.fileHandleForWriting.write(Data(bytes))
        try input.fileHandleForWriting.close()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return String(text.prefix(64))
    }

    @Test(arguments: [false, true])
    func partsAreSentAsCurlSendsThem(withPolicy: Bool) async throws {
        let server = try RecordingServer()
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        let photo = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let photoPath = files.directory.appending(path: "beach.jpg").path
        try Data(photo).write(to: URL(fileURLWithPath: photoPath))
        let notes = try files.write("notes.txt", "line one\nline two\n")
        let policy = withPolicy ? ["--policy", try files.write("policy.yaml", FetchTestFiles.sendOncePolicy)] : []
        let result = try await CourierProcess.run(["fetch"] + policy + [
            "-F", "title=Holiday", "-F", "photo=@\(photoPath);type=image/jpeg;filename=sea.jpg", "-F", "notes=<\(notes)",
            "-H", "Content-Type: text/plain", server.url("/v1/upload"),
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let request = try #require(server.requests.first)
        #expect(request.requestLine.hasPrefix("POST /v1/upload "))
        let contentType = try #require(request.header("Content-Type"))
        #expect(contentType.hasPrefix("multipart/form-data; boundary="), "-F's type replaces -H's: \(contentType)")
        #expect(request.header("Content-Length") == String(request.body.count))
        let parsed = try PythonMultipartParser.parse(request.body, contentType: contentType)
        #expect(parsed.defects.isEmpty)
        #expect(parsed.parts == [
            PythonMultipartParser.Part(name: "title", filename: nil, content_type: nil, size: 7, sha256: try Self.sha256(Array("Holiday".utf8))),
            PythonMultipartParser.Part(name: "photo", filename: "sea.jpg", content_type: "image/jpeg", size: photo.count, sha256: try Self.sha256(photo)),
            PythonMultipartParser.Part(name: "notes", filename: nil, content_type: nil, size: 18, sha256: try Self.sha256(Array("line one\nline two\n".utf8))),
        ])
    }

    @Test func aMissingFileOrAMalformedPartIsAnErrorBeforeAnyRequest() async throws {
        let server = try RecordingServer()
        defer { server.stop() }
        let missing = try await CourierProcess.run(["fetch", "-F", "f=@/nonexistent/x.bin", server.url("/")])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("/nonexistent/x.bin"), "\(missing.stderr)")
        #expect(missing.stderr.contains("No such file or directory"), "\(missing.stderr)")
        let malformed = try await CourierProcess.run(["fetch", "-F", "novalue", server.url("/")])
        #expect(malformed.status == 2)
        #expect(malformed.stderr.contains("-F takes name=value"), "\(malformed.stderr)")
        let both = try await CourierProcess.run(["fetch", "-F", "a=b", "-d", "x=y", server.url("/")])
        #expect(both.status != 0)
        #expect(both.stderr.contains("-F sends a multipart form"), "\(both.stderr)")
        #expect(server.requests.isEmpty)
    }
}
