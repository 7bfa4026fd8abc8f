#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

internal import CourierCore

/// The few file-system operations the compiler needs: read a file, canonicalise and resolve include paths
/// (whether a file exists is `SystemCall.isRegularFile`). Reading goes through CourierCore's one system-call
/// wrapper (``SystemCall``), and failures become a ``PolicyFileError`` that names the call, the path and errno.
enum PolicyFileSystem {
    /// Reads a whole regular file, refusing files larger than `maxBytes` before reading them.
    static func read(_ path: String, maxBytes: Int) -> Result<[UInt8], PolicyFileError> {
        do throws(SystemCall.FileReadFailure) {
            return .success(try SystemCall.readFile(path, maxBytes: maxBytes))
        } catch {
            switch error {
            case .system(let failure):
                return .failure(PolicyFileError(
                    path: path, reason: .system(call: failure.call, errno: failure.errno, message: failure.errnoDescription)
                ))
            case .notAFile:
                return .failure(PolicyFileError(path: path, reason: .notAFile))
            case .tooLarge(let limit):
                return .failure(PolicyFileError(path: path, reason: .tooLarge(limit: limit)))
            }
        }
    }

    /// The canonical absolute path (symlinks resolved), or nil when the file does not exist.
    static func canonicalPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `path` made absolute against the working directory (no symlink resolution; the file need not exist).
    static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return normalise(path) }
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getcwd(&buffer, buffer.count) != nil else { return path }
        let cwd = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return normalise(cwd + "/" + path)
    }

    /// The directory part of a path as the user wrote it ("" for a bare file name).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    /// `relative` resolved against the directory of `file`, kept relative when `file` is relative.
    static func resolve(_ relative: String, from file: String) -> String {
        if relative.hasPrefix("/") { return relative }
        let dir = directory(of: file)
        if dir.isEmpty { return relative }
        return normalise(dir == "/" ? "/" + relative : dir + "/" + relative)
    }

    /// Removes `.` segments and duplicate slashes, and folds `dir/..` where it can (purely textual).
    static func normalise(_ path: String) -> String {
        let absolute = path.hasPrefix("/")
        var out: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            if part == "." { continue }
            if part == "..", let last = out.last, last != ".." {
                out.removeLast()
                continue
            }
            if part == ".." && absolute && out.isEmpty { continue }
            out.append(part)
        }
        let joined = out.joined(separator: "/")
        if absolute { return "/" + joined }
        return joined.isEmpty ? "." : joined
    }
}
