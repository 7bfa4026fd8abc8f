import Foundation
import Testing

/// Scratch files and report parsing for the fetch tests.
struct FetchTestFiles {
    let directory: URL

    /// Makes a fresh scratch directory; call ``remove()`` when done.
    init() throws {
        directory = FileManager.default.temporaryDirectory.appending(path: "courier-fetch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// A policy that routes 127.0.0.1 and retries nothing, so a request through it is sent once.
    static let sendOncePolicy = """
        version: 1
        services:
          local:
            hosts: [127.0.0.1]
            scheme: http
            retry: { max-attempts: 1 }
        """

    /// A policy whose one service, `cached`, routes 127.0.0.1 with the cache clause `cache` (e.g. `{ ttl: 1m }`).
    static func cachingPolicy(_ cache: String) -> String {
        """
        version: 1
        services:
          cached:
            hosts: [127.0.0.1]
            scheme: http
            cache: \(cache)
        """
    }

    func path(_ name: String) -> String { directory.appending(path: name).path }

    /// Writes `text` to `name` and returns its path.
    func write(_ name: String, _ text: String) throws -> String {
        try Data(text.utf8).write(to: directory.appending(path: name))
        return path(name)
    }

    func read(_ name: String) throws -> String {
        try String(contentsOf: directory.appending(path: name), encoding: .utf8)
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }

    /// The `--json-report` lines in `text` (other lines, such as messages and traces, are skipped).
    static func reports(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").filter { $0.hasPrefix("{") }.map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }
}
