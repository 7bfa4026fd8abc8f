import Foundation
import Testing

/// Byte-for-byte comparison with files in `Golden/`. Run the tests with `COURIER_UPDATE_GOLDEN=1` to write
/// the current output as the new golden files (then review the diff before committing).
enum GoldenFile {
    static let directory = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "Golden")

    static var updating: Bool { ProcessInfo.processInfo.environment["COURIER_UPDATE_GOLDEN"] == "1" }

    static func check(_ actual: String, named name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let url = directory.appending(path: name)
        if updating {
            try Data(actual.utf8).write(to: url)
            return
        }
        let expected = try String(contentsOf: url, encoding: .utf8)
        #expect(
            actual == expected,
            "output differs from Golden/\(name); if the change is intended, rerun with COURIER_UPDATE_GOLDEN=1",
            sourceLocation: sourceLocation
        )
    }
}

/// A fresh directory under the system's temporary directory, removed by ``remove()``.
struct TemporaryDirectory {
    let path: String

    init() throws {
        let url = FileManager.default.temporaryDirectory.appending(path: "courier-lint-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        path = url.path
    }

    /// Writes `contents` at `relative` (creating folders) and returns the full path.
    @discardableResult
    func write(_ relative: String, _ contents: String) throws -> String {
        let full = path + "/" + relative
        let folder = (full as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data(contents.utf8).write(to: URL(filePath: full))
        return full
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}
