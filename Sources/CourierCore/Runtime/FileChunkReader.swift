#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif
internal import Synchronization

/// A regular file read front to back in chunks, each read a system call through ``SystemCall``: for bodies streamed
/// from disk (a multipart upload's file parts), so that a file of any size never sits in memory. The file is opened
/// on the first ``next()`` and closed at its end, on a failure, or when the reader is released.
package final class FileChunkReader: Sendable {
    package let path: String
    private let chunkSize: Int
    private enum State {
        case unopened
        case open(Int32)
        case finished
    }

    private let state = Mutex(State.unopened)

    package init(path: String, chunkSize: Int = 64 * 1024) {
        self.path = path
        self.chunkSize = max(1, chunkSize)
    }

    deinit {
        if case .open(let fd) = state.withLock({ $0 }) { _ = close(fd) }
    }

    /// The size of the regular file at `path`.
    package static func size(of path: String) throws(SystemCall.FileReadFailure) -> Int {
        var info = stat()
        do {
            _ = try SystemCall.blocking("stat") { stat(path, &info) }
        } catch {
            throw .system(error)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw .notAFile }
        return Int(info.st_size)
    }

    /// The next chunk (at most the chunk size), or nil at the end of the file (and after a failure).
    package func next() throws(SystemCall.FileReadFailure) -> [UInt8]? {
        try state.withLock { (state: inout State) throws(SystemCall.FileReadFailure) -> [UInt8]? in
            let fd: Int32
            switch state {
            case .finished:
                return nil
            case .open(let open):
                fd = open
            case .unopened:
                do throws(SystemCallError) {
                    fd = try SystemCall.blocking("open") { open(path, O_RDONLY | O_CLOEXEC) }
                } catch {
                    state = .finished
                    throw .system(error)
                }
                state = .open(fd)
            }
            var failure: SystemCallError?
            let chunk = [UInt8](unsafeUninitializedCapacity: chunkSize) { buffer, count in
                do throws(SystemCallError) {
                    count = try SystemCall.blocking("read") { read(fd, buffer.baseAddress, chunkSize) }
                } catch {
                    failure = error
                }
            }
            if let failure {
                _ = close(fd)  // close(2) is not retried: after EINTR the descriptor is already gone.
                state = .finished
                throw .system(failure)
            }
            if chunk.isEmpty {
                _ = close(fd)
                state = .finished
                return nil
            }
            return chunk
        }
    }
}
