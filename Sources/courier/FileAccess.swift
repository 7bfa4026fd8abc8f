internal import Foundation

/// Checks of files a command is given, answered with the system's reason (`strerror`) when the answer is no.
enum FileAccess {
    /// Nil when `path` can be read as a file; else why not (`No such file or directory`, `Permission denied`,
    /// `Is a directory`).
    static func readProblem(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return CommandFailure.reason() }
        if info.st_mode & S_IFMT == S_IFDIR { return CommandFailure.reason(EISDIR) }
        return access(path, R_OK) == 0 ? nil : CommandFailure.reason()
    }

    /// Nil when `path` can be written without creating anything else first: an existing file that is writable,
    /// or a new name in a writable directory; else why not.
    static func writeProblem(_ path: String) -> String? {
        var info = stat()
        if stat(path, &info) == 0 {
            if info.st_mode & S_IFMT == S_IFDIR { return CommandFailure.reason(EISDIR) }
            return access(path, W_OK) == 0 ? nil : CommandFailure.reason()
        }
        guard errno == ENOENT else { return CommandFailure.reason() }
        let parent = (path as NSString).deletingLastPathComponent
        let directory = parent.isEmpty ? "." : parent
        guard stat(directory, &info) == 0 else { return CommandFailure.reason() }
        if info.st_mode & S_IFMT != S_IFDIR { return CommandFailure.reason(ENOTDIR) }
        return access(directory, W_OK) == 0 ? nil : CommandFailure.reason()
    }

    /// Nil when `path` is a directory; else why not (`No such file or directory`, `Not a directory`).
    static func directoryProblem(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return CommandFailure.reason() }
        return info.st_mode & S_IFMT == S_IFDIR ? nil : CommandFailure.reason(ENOTDIR)
    }
}
