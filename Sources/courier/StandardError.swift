internal import Foundation
internal import Synchronization

/// Writes diagnostics and summaries to standard error, each followed by one newline.
enum StandardError {
    /// Whether error messages (``error(_:)``) are left out: `courier fetch -s` without `-S`, as curl's.
    private static let silenced = Atomic<Bool>(false)

    /// Leaves error messages out from now on (`on`), or writes them again.
    static func silence(_ on: Bool) { silenced.store(on, ordering: .relaxed) }

    static func write(_ text: String) {
        guard !text.isEmpty else { return }
        let line = text.hasSuffix("\n") ? text : text + "\n"
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// Writes an error message unless ``silenced``.
    static func error(_ text: String) {
        guard !silenced.load(ordering: .relaxed) else { return }
        write(text)
    }
}
