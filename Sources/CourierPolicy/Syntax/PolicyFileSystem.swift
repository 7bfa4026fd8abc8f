#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The few file-system calls the compiler needs (read a file, canonicalise a path, check that a file exists),
/// each retrying `EINTR` and failing with a ``PolicyFileError`` that names the call, the path and errno.
///
/// CourierPolicy sits beside CourierPosix in the layering and may not import it, and the layer rules keep
/// Foundation out of it; this is its own small chokepoint.
enum PolicyFileSystem {
    /// Reads a whole regular file, refusing files larger than `maxBytes` before reading them.
    static func read(_ path: String, maxBytes: Int) -> Result<[UInt8], PolicyFileError> {
        var fd: Int32 = -1
        repeat { fd = open(path, O_RDONLY | O_CLOEXEC) } while fd < 0 && errno == EINTR
        guard fd >= 0 else { return .failure(systemError(path, "open")) }
        defer { _ = close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return .failure(systemError(path, "fstat")) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return .failure(PolicyFileError(path: path, reason: .notAFile)) }
        if Int(info.st_size) > maxBytes { return .failure(PolicyFileError(path: path, reason: .tooLarge(limit: maxBytes))) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(info.st_size))
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(systemError(path, "read"))
            }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
            // The file may grow while we read it.
            if bytes.count > maxBytes { return .failure(PolicyFileError(path: path, reason: .tooLarge(limit: maxBytes))) }
        }
        return .success(bytes)
    }

    /// The canonical absolute path (symlinks resolved), or nil when the file does not exist.
    static func canonicalPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Whether `path` names an existing regular file.
    static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
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

    private static func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        return Glibc.read(fd, buffer, count)
        #elseif canImport(Musl)
        return Musl.read(fd, buffer, count)
        #else
        return Darwin.read(fd, buffer, count)
        #endif
    }

    private static func systemError(_ path: String, _ call: String) -> PolicyFileError {
        let code = errno
        let message = strerror(code).map { String(cString: $0) } ?? "error \(code)"
        return PolicyFileError(path: path, reason: .system(call: call, errno: code, message: message))
    }
}
