internal import Foundation
internal import Synchronization

/// An `-o` file. As in curl it is created (or emptied) only when the first byte is written to it, so a response
/// with nothing to write (`--fail` on a status of 400 or more, a 304) leaves no file and an existing file
/// untouched. Several URLs may share one (`-o f -o f`); they write to it one after another.
final class OutputFile: Sendable {
    /// Where a URL's bytes began in the file: for undoing them when its transfer fails.
    struct Mark: Sendable {
        /// The file did not exist yet: this URL's first byte created it.
        var created: Bool
        /// The file's length before this URL's first byte.
        var offset: UInt64
    }

    private enum State {
        /// No byte was written yet: the file was not touched.
        case untouched
        case open(FileHandle)
        /// It could not be created or written (said once on standard error); what was to be written is lost.
        case failed
    }

    let path: String
    /// `-C`: the file is continued, not emptied: bytes go after what it holds, and a failed transfer keeps what it
    /// appended (the next `-C -` continues from there), as curl's does.
    let appending: Bool
    private let state = Mutex<State>(.untouched)

    init(path: String, appending: Bool = false) {
        self.path = path
        self.appending = appending
    }

    /// The file's size now (0 when it does not exist): where `-C -` continues.
    var size: Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value ?? 0
    }

    /// Where the next byte will go, creating (emptying) the file first if no byte was written to it yet.
    func mark() -> Mark {
        state.withLock { state in
            if case .open(let handle) = state { return Mark(created: false, offset: handle.offsetInFile) }
            let existed = appending && FileManager.default.fileExists(atPath: path)
            create(&state)
            if case .open(let handle) = state, existed { return Mark(created: false, offset: handle.offsetInFile) }
            return Mark(created: true, offset: 0)
        }
    }

    /// Appends `bytes`, creating (emptying) the file first if no byte was written to it yet. A write that fails
    /// (a full disk, a file-size limit) is said once on standard error, and the file takes nothing more.
    func write(_ bytes: some Collection<UInt8>) {
        state.withLock { state in
            create(&state)
            guard case .open(let handle) = state else { return }
            do {
                try handle.write(contentsOf: Data(bytes))
            } catch {
                StandardError.error("courier fetch: writing \(path) failed: \(OutputFile.reason(error))")
                try? handle.close()
                state = .failed
            }
        }
    }

    /// Whether a byte meant for the file could not be written: the transfer's output is incomplete.
    var hasFailed: Bool {
        state.withLock { if case .failed = $0 { return true } else { return false } }
    }

    /// The POSIX reason under a Foundation write error (`File too large`, `No space left on device`, ...).
    static func reason(_ error: any Error) -> String {
        let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
        if let underlying, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        return "\(error)"
    }

    /// Creates the file (empty) if nothing was written to it yet: a transfer that completed with an empty body.
    func create() {
        state.withLock { create(&$0) }
    }

    /// Undoes what was written since `mark`: the file is removed when that mark created it, else cut back to its
    /// length at the mark.
    func rollBack(to mark: Mark) {
        state.withLock { state in
            guard !appending, case .open(let handle) = state else { return }
            if mark.created {
                try? handle.close()
                state = .untouched
                try? FileManager.default.removeItem(atPath: path)
            } else {
                try? handle.truncate(atOffset: mark.offset)
            }
        }
    }

    /// Opens the file for writing, emptied (or, appending, at its end), if it is untouched.
    private func create(_ state: inout State) {
        guard case .untouched = state else { return }
        if appending, let handle = FileHandle(forWritingAtPath: path) {
            _ = try? handle.seekToEnd()
            state = .open(handle)
            return
        }
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
            StandardError.error("courier fetch: cannot write \(path): \(FileAccess.writeProblem(path) ?? "it could not be created")")
            state = .failed
            return
        }
        state = .open(handle)
    }
}
