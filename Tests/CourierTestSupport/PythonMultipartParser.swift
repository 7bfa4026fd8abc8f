import Foundation

/// A `multipart/form-data` body as Python's `email` package reads it (`Tests/Peers/multipart_parse.py`): an
/// independent parser for Courier's multipart encoder.
public struct PythonMultipartParser {
    public struct Part: Decodable, Equatable, Sendable {
        public var name: String?
        public var filename: String?
        public var content_type: String?
        public var size: Int
        public var sha256: String

        public init(name: String?, filename: String?, content_type: String?, size: Int, sha256: String) {
            (self.name, self.filename, self.content_type, self.size, self.sha256) = (name, filename, content_type, size, sha256)
        }
    }

    public struct Parsed: Decodable, Sendable {
        public var parts: [Part]
        /// The parser's defect classes (none for a well-formed body).
        public var defects: [String]
        public var multipart: Bool
    }

    /// Parses `body` sent with `contentType`.
    public static func parse(_ body: [UInt8], contentType: String) throws -> Parsed {
        let directory = FileManager.default.temporaryDirectory.appending(path: "courier-multipart-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appending(path: "body")
        try Data(body).write(to: file)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appending(path: "Peers/multipart_parse.py")
        guard let python = ChildProcess.python else { throw PythonPeer.PeerError.didNotStart("no python3 in PATH") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script.path, contentType, file.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return try JSONDecoder().decode(Parsed.self, from: data)
    }
}
