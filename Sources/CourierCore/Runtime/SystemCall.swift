#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The one place a Courier module calls into the C library for a system call: ``run(_:wouldBlockIsValue:_:)``
/// retries `EINTR` and turns every other failure into a ``SystemCallError`` carrying the call and `errno`.
/// CourierPosix builds its socket and event-loop calls on it, the policy compiler and the authorisers' secret
/// files read through ``readFile(_:maxBytes:)``.
package enum SystemCall {
    /// Runs `body`, a C call that returns -1 and sets `errno` on failure, until it stops failing with `EINTR`.
    ///
    /// - Returns: the call's result, or nil when `wouldBlockIsValue` is set and the call failed with `EAGAIN`
    ///   (`EWOULDBLOCK`) on a non-blocking descriptor.
    /// - Throws: ``SystemCallError`` for any other `errno`. `EBADF` and `EFAULT` can only mean a bug in the
    ///   caller (a closed or foreign descriptor, a bad pointer), so they stop the process instead.
    @inlinable
    package static func run<T: FixedWidthInteger>(
        _ call: StaticString, wouldBlockIsValue: Bool = false, _ body: () -> T
    ) throws(SystemCallError) -> T? {
        while true {
            let result = body()
            if result != -1 { return result }
            let code = errno
            if code == EINTR { continue }
            if wouldBlockIsValue && (code == EAGAIN || code == EWOULDBLOCK) { return nil }
            precondition(code != EBADF && code != EFAULT, "'\(call)' failed with errno \(code): a bug in the caller")
            throw SystemCallError(call: "\(call)", errno: code)
        }
    }

    /// ``run(_:wouldBlockIsValue:_:)`` for calls on blocking descriptors and paths, which never "would block".
    @inlinable
    package static func blocking<T: FixedWidthInteger>(_ call: StaticString, _ body: () -> T) throws(SystemCallError) -> T {
        // Without `wouldBlockIsValue` the result is never nil.
        try run(call, body)!
    }

    /// Why ``readFile(_:maxBytes:)`` could not read a file.
    package enum FileReadFailure: Error, Hashable, Sendable, CustomStringConvertible {
        /// A call failed (`open` with `ENOENT` for a missing file, `EACCES`, …).
        case system(SystemCallError)
        /// The path names a directory, device or other non-regular file.
        case notAFile
        /// The file is larger than the limit (checked before reading, and again as it is read).
        case tooLarge(limit: Int)

        package var description: String {
            switch self {
            case .system(let error): return error.description
            case .notAFile: return "not a regular file"
            case .tooLarge(let limit): return "larger than \(limit) bytes"
            }
        }
    }

    /// Reads a whole regular file, refusing one larger than `maxBytes` before reading it.
    package static func readFile(_ path: String, maxBytes: Int) throws(FileReadFailure) -> [UInt8] {
        do {
            let fd = try blocking("open") { open(path, O_RDONLY | O_CLOEXEC) }
            defer { _ = close(fd) }  // close(2) is not retried: after EINTR the descriptor is already gone.
            var info = stat()
            _ = try blocking("fstat") { fstat(fd, &info) }
            guard (info.st_mode & S_IFMT) == S_IFREG else { throw FileReadFailure.notAFile }
            guard Int(info.st_size) <= maxBytes else { throw FileReadFailure.tooLarge(limit: maxBytes) }
            return try readToEnd(fileDescriptor: fd, maxBytes: maxBytes, expected: Int(info.st_size))
        } catch let error as SystemCallError {
            throw .system(error)
        } catch let error as FileReadFailure {
            throw error
        } catch {
            preconditionFailure("unreachable: \(error)")
        }
    }

    /// Reads `fileDescriptor` (a blocking file, pipe or socket) until end of file, retrying `EINTR`, as
    /// Foundation's `FileHandle` reads do not (a child process's `SIGCHLD` can interrupt them).
    ///
    /// - Throws: ``FileReadFailure/tooLarge(limit:)`` once more than `maxBytes` arrive, ``FileReadFailure/system(_:)``
    ///   when `read` fails.
    package static func readToEnd(fileDescriptor: Int32, maxBytes: Int = .max) throws(FileReadFailure) -> [UInt8] {
        try readToEnd(fileDescriptor: fileDescriptor, maxBytes: maxBytes, expected: 0)
    }

    private static func readToEnd(fileDescriptor fd: Int32, maxBytes: Int, expected: Int) throws(FileReadFailure) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(expected)
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n: Int
            do {
                n = try blocking("read") { chunk.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress, $0.count) } }
            } catch {
                throw .system(error)
            }
            if n == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<n])
            // A file may grow while it is read.
            guard bytes.count <= maxBytes else { throw FileReadFailure.tooLarge(limit: maxBytes) }
        }
    }

    /// Whether `path` names an existing regular file.
    /// The permission bits of the file at `path` (`0o644`), following symbolic links; nil when it cannot be found.
    package static func permissions(_ path: String) -> UInt32? {
        var info = stat()
        guard (try? blocking("stat") { stat(path, &info) }) != nil else { return nil }
        return UInt32(info.st_mode) & 0o7777
    }

    package static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return (try? blocking("stat") { stat(path, &info) }) != nil && (info.st_mode & S_IFMT) == S_IFREG
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
}
