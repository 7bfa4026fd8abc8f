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
/// on the first ``next()`` and closed at its end, on a failure, or when the reader is released. A reader made from
/// a descriptor already open (``init(adopting:range:chunkSize:)``: ``FileProtocol``, which checks the file it
/// opened) reads one byte range of it with `pread`.
package final class FileChunkReader: Sendable {
    package let path: String
    private let chunkSize: Int
    private enum State {
        case unopened
        /// The descriptor, and where the next read starts.
        case open(Int32, offset: Int)
        case finished
    }

    private let state: Mutex<State>
    /// Where reading stops (a range's end); nil: at the end of the file.
    private let end: Int?

    package init(path: String, chunkSize: Int = 64 * 1024) {
        self.path = path
        self.chunkSize = max(1, chunkSize)
        self.state = Mutex(.unopened)
        self.end = nil
    }

    /// Reads `range` of the open descriptor `fd`, which the reader now owns (it closes it at the end, on a failure,
    /// on ``close()`` or when released). A file that turns out shorter ends early.
    package init(adopting fd: Int32, range: Range<Int>, path: String, chunkSize: Int = 64 * 1024) {
        self.path = path
        self.chunkSize = max(1, chunkSize)
        self.state = Mutex(.open(fd, offset: range.lowerBound))
        self.end = range.upperBound
    }

    deinit {
        close()
    }

    /// Closes the file now (a reader given up before the end); later reads return nil.
    package func close() {
        state.withLock { state in
            if case .open(let fd, _) = state { _ = closeFile(fd) }
            state = .finished
        }
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
            let offset: Int
            switch state {
            case .finished:
                return nil
            case .open(let open, let at):
                (fd, offset) = (open, at)
            case .unopened:
                do throws(SystemCallError) {
                    fd = try SystemCall.blocking("open") { open(path, O_RDONLY | O_CLOEXEC) }
                } catch {
                    state = .finished
                    throw .system(error)
                }
                offset = 0
            }
            let size = end.map { min(chunkSize, $0 - offset) } ?? chunkSize
            var failure: SystemCallError?
            let chunk = [UInt8](unsafeUninitializedCapacity: max(size, 0)) { buffer, count in
                guard size > 0 else { return }
                do throws(SystemCallError) {
                    if end == nil {
                        count = try SystemCall.blocking("read") { read(fd, buffer.baseAddress, size) }
                    } else {
                        count = try SystemCall.blocking("pread") { pread(fd, buffer.baseAddress, size, off_t(offset)) }
                    }
                } catch {
                    failure = error
                }
            }
            if let failure {
                _ = closeFile(fd)  // close(2) is not retried: after EINTR the descriptor is already gone.
                state = .finished
                throw .system(failure)
            }
            if chunk.isEmpty {
                _ = closeFile(fd)
                state = .finished
                return nil
            }
            state = .open(fd, offset: offset + chunk.count)
            return chunk
        }
    }
}

/// close(2), out of the reader's scope (its ``FileChunkReader/close()`` shadows the C function there).
private func closeFile(_ fd: Int32) -> Int32 { close(fd) }
