/// Why a policy file (or a file a policy names) could not be read: the system call, the path and `errno`.
struct PolicyFileError: Error, Hashable, Sendable, CustomStringConvertible {
    enum Reason: Hashable, Sendable {
        /// A system call failed with this errno.
        case system(call: String, errno: Int32, message: String)
        /// The file is larger than the limit.
        case tooLarge(limit: Int)
        /// The path is a directory or another non-regular file.
        case notAFile
    }

    var path: String
    var reason: Reason

    var description: String {
        switch reason {
        case .system(let call, let errno, let message): return "cannot read '\(path)': '\(call)' failed: (\(errno)) \(message)"
        case .tooLarge(let limit): return "'\(path)' is larger than the \(limit)-byte limit for a policy file"
        case .notAFile: return "'\(path)' is not a regular file"
        }
    }

    /// Whether the file simply does not exist.
    var isMissing: Bool {
        if case .system(_, let e, _) = reason { return e == 2 }  // ENOENT
        return false
    }
}
