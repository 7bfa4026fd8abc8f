internal import ArgumentParser
internal import Foundation

/// Where `--json-report` lines go: a file, or standard error for `-`.
final class ReportSink {
    private let handle: FileHandle

    init(_ path: String) throws {
        if path == "-" {
            handle = .standardError
        } else {
            guard FileManager.default.createFile(atPath: path, contents: nil), let h = FileHandle(forWritingAtPath: path) else {
                throw ValidationError("cannot write the report to \(path)")
            }
            handle = h
        }
    }

    func write(_ report: FetchReport) {
        handle.write(Data((report.jsonLine() + "\n").utf8))
    }
}
