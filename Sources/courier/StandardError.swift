internal import Foundation

/// Writes diagnostics and summaries to standard error, each followed by one newline.
enum StandardError {
    static func write(_ text: String) {
        guard !text.isEmpty else { return }
        let line = text.hasSuffix("\n") ? text : text + "\n"
        FileHandle.standardError.write(Data(line.utf8))
    }
}
