internal import Foundation

/// Where `--json-report` lines go: a file, or standard error for `-`.
final class ReportSink {
    private let handle: FileHandle

    init(_ path: String) throws {
        if path == "-" {
            handle = .standardError
        } else {
            if let problem = FileAccess.writeProblem(path) {
                throw CommandFailure("courier fetch: cannot write the report to \(path): \(problem)")
            }
            guard FileManager.default.createFile(atPath: path, contents: nil), let h = FileHandle(forWritingAtPath: path) else {
                throw CommandFailure("courier fetch: cannot write the report to \(path): \(CommandFailure.reason())")
            }
            handle = h
        }
    }

    func write(_ report: FetchReport) {
        handle.write(Data((report.jsonLine() + "\n").utf8))
    }
}
