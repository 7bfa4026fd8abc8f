internal import CCourierPosix
internal import CourierCore

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#endif

/// The file operations of the store, each on ``SystemCall`` (EINTR retried, typed errors).
enum RecordFile {
    /// A whole file's bytes, or nil if it does not exist.
    static func read(_ path: String, maxBytes: Int) throws(SystemCallError) -> [UInt8]? {
        do {
            return try SystemCall.readFile(path, maxBytes: maxBytes)
        } catch {
            switch error {
            case .system(let failure) where failure.errno == ENOENT: return nil
            case .system(let failure): throw failure
            // A directory or device where a record should be, or a file over the limit: not a record.
            case .notAFile, .tooLarge: return []
            }
        }
    }

    /// The header (fixed part and key) of a file and the file's length, or nil if it does not exist. Reads
    /// at most 64 bytes plus the key, never the payload: one `pread` covers the fixed part and a key of up to
    /// ``keyBytesReadAtOnce`` bytes, a second one a longer key.
    static func readHeader(_ path: String) throws(SystemCallError) -> (bytes: [UInt8], fileSize: Int64)? {
        let fd: Int32
        do {
            fd = try SystemCall.blocking("open") { open(path, O_RDONLY | O_CLOEXEC) }
        } catch where error.errno == ENOENT {
            return nil
        }
        defer { _ = close(fd) }  // close(2) is not retried: after EINTR the descriptor is already gone.
        var info = stat()
        _ = try SystemCall.blocking("fstat") { fstat(fd, &info) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return ([], Int64(info.st_size)) }
        return (try readHeaderPart(fd, fileSize: Int(info.st_size)), Int64(info.st_size))
    }

    /// The fixed part and the key as the fixed part declares its length (as much of them as the file has).
    private static func readHeaderPart(_ fd: Int32, fileSize: Int) throws(SystemCallError) -> [UInt8] {
        var bytes = try readAt(fd, offset: 0, count: min(fileSize, RecordHeader.fixedSize + keyBytesReadAtOnce))
        if bytes.count >= RecordHeader.fixedSize {
            let keySize = Int(bytes[48]) | Int(bytes[49]) << 8 | Int(bytes[50]) << 16 | Int(bytes[51]) << 24
            // A key size over the limit is corrupt: the fixed part alone lets the decoder say so.
            let wanted = RecordHeader.fixedSize + (keySize <= RecordHeader.maximumKeyBytes ? keySize : 0)
            if bytes.count > wanted {
                bytes.removeLast(bytes.count - wanted)
            } else if bytes.count < wanted {
                bytes += try readAt(fd, offset: bytes.count, count: wanted - bytes.count)
            }
        }
        return bytes
    }

    /// A record file opened for a load: its header part and payload read apart (so the payload is read once,
    /// straight into the array the caller returns, never copied out of a whole-file buffer), and the descriptor
    /// kept open so the access time is rewritten through it, without a second `open`.
    struct OpenedForLoad {
        let fd: Int32
        /// False where the file could only be opened for reading (permissions, a read-only mount): the access
        /// time cannot move.
        let writable: Bool
        /// The fixed part and the key, or fewer bytes when the file is shorter (empty for a non-record).
        let header: [UInt8]
        /// The bytes after ``header``.
        let payload: [UInt8]
        let fileSize: Int
    }

    /// Opens `path` and reads it as ``OpenedForLoad``, runs `body`, then closes it. Nil (and `body` is not run) if
    /// the file does not exist. A directory, device or file over `maxBytes` is read as empty (not a record).
    static func withOpenedForLoad<T>(
        _ path: String, maxBytes: Int, _ body: (OpenedForLoad) throws(SystemCallError) -> T
    ) throws(SystemCallError) -> T? {
        var writable = true
        let fd: Int32
        do {
            fd = try SystemCall.blocking("open") { open(path, O_RDWR | O_CLOEXEC) }
        } catch where error.errno == ENOENT {
            return nil
        } catch where error.errno == EISDIR {
            return try body(OpenedForLoad(fd: -1, writable: false, header: [], payload: [], fileSize: 0))
        } catch where error.errno == EACCES || error.errno == EPERM || error.errno == EROFS {
            writable = false
            do {
                fd = try SystemCall.blocking("open") { open(path, O_RDONLY | O_CLOEXEC) }
            } catch where error.errno == ENOENT {
                return nil
            }
        }
        defer { _ = close(fd) }
        var info = stat()
        _ = try SystemCall.blocking("fstat") { fstat(fd, &info) }
        let fileSize = Int(info.st_size)
        guard (info.st_mode & S_IFMT) == S_IFREG, fileSize <= maxBytes else {
            return try body(OpenedForLoad(fd: fd, writable: false, header: [], payload: [], fileSize: fileSize))
        }
        let header = try readHeaderPart(fd, fileSize: fileSize)
        let payload = header.count < fileSize ? try readAt(fd, offset: header.count, count: fileSize - header.count) : []
        return try body(OpenedForLoad(fd: fd, writable: writable, header: header, payload: payload, fileSize: fileSize))
    }

    /// The key bytes ``readHeader(_:)`` reads with the fixed part in one call (URLs are rarely longer).
    static let keyBytesReadAtOnce = 448

    /// Up to `count` bytes at `offset` (fewer at the end of the file), read straight into the returned array.
    private static func readAt(_ fd: Int32, offset: Int, count: Int) throws(SystemCallError) -> [UInt8] {
        var failure: SystemCallError?
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            while initialized < count {
                let n: Int
                do throws(SystemCallError) {
                    n = try SystemCall.blocking("pread") {
                        pread(fd, buffer.baseAddress! + initialized, count - initialized, off_t(offset + initialized))
                    }
                } catch {
                    failure = error
                    return
                }
                if n == 0 { return }
                initialized += n
            }
        }
        if let failure { throw failure }
        return bytes
    }

    /// Writes `header` and `payload` to `temporaryPath`, then renames it over `path`: a reader (or a crash) sees
    /// the old file, the new one, or (if there was no old one) none. On failure the temporary file is removed and
    /// the old record left as it was. If `directory` (the stripe's) is missing it is created and the write tried
    /// again: the store does not `mkdir` before every write, only when the directory turns out to be gone.
    ///
    /// With ``FsyncPolicy/durable`` the order of the syncs depends on whether there is an old record to keep:
    /// - **A new key** (the rename with `RENAME_NOREPLACE` succeeds): rename first, then `fsync` the file and the
    ///   directory. Nothing older can be lost, and on a journaling file system the file's sync commits the rename
    ///   with it, so the directory's sync finds nothing left to do: one journal commit instead of two. If a sync
    ///   fails, the new file is removed again (the key reads as missing, as before the call).
    /// - **A replacement** (`EEXIST`), or a file system without `RENAME_NOREPLACE`: `fsync` the temporary file
    ///   first, then rename over the old record and `fsync` the directory, so a failed sync leaves the old record
    ///   untouched.
    static func writeAtomically(
        _ header: [UInt8], _ payload: [UInt8], to path: String, via temporaryPath: String, directory: String,
        fsync policy: FsyncPolicy, fault: WriteFault?
    ) throws(SystemCallError) {
        let fd: Int32
        do {
            fd = try createTruncating(temporaryPath)
        } catch where error.errno == ENOENT {
            try makeDirectory(directory)
            fd = try createTruncating(temporaryPath)
        }
        var published = false
        do throws(SystemCallError) {
            let budget = fault?.writeBudget ?? Int.max
            let headerBytes = min(header.count, budget)
            let payloadBytes = min(payload.count, budget - headerBytes)
            try writeAll(fd, header[0..<headerBytes], payload[0..<payloadBytes])
            if headerBytes + payloadBytes < header.count + payload.count, let fault {
                switch fault.kind {
                case .crash: throw WriteFault.crashMarker
                case .fail(let code): throw SystemCallError(call: "write", errno: code)
                case .failSync: break
                }
            }
            if policy == .durable {
                published = try renameIfNew(temporaryPath, path)
                try sync(fd, fault: fault)
            }
        } catch {
            _ = close(fd)
            if published {
                // A new key whose sync failed: take it back, so the key is missing as it was before.
                _ = try? unlink(path)
            } else if error != WriteFault.crashMarker {
                // A killed writer leaves its temporary file; garbage collection removes it.
                _ = try? unlink(temporaryPath)
            }
            throw error
        }
        _ = close(fd)
        if !published {
            do {
                _ = try SystemCall.blocking("rename") { rename(temporaryPath, path) }
            } catch {
                _ = try? unlink(temporaryPath)
                throw error
            }
        }
        if policy == .durable {
            do {
                try syncDirectory(directory)
            } catch {
                if published { _ = try? unlink(path) }
                throw error
            }
        }
    }

    /// Renames `temporaryPath` to `path` if nothing is there yet (true); false when a record exists (it must not
    /// be replaced before the new file is synced) or the file system has no `RENAME_NOREPLACE`.
    private static func renameIfNew(_ temporaryPath: String, _ path: String) throws(SystemCallError) -> Bool {
        do {
            _ = try SystemCall.blocking("renameat2") { CCourierPosix_renameNoReplace(temporaryPath, path) }
            return true
        } catch where error.errno == EEXIST || error.errno == EINVAL || error.errno == ENOSYS {
            return false
        }
    }

    /// `fsync(2)` of a written file, or the failure a test's fault injects in its place.
    private static func sync(_ fd: Int32, fault: WriteFault?) throws(SystemCallError) {
        if case .failSync(let code) = fault?.kind { throw SystemCallError(call: "fsync", errno: code) }
        _ = try SystemCall.blocking("fsync") { Glibc.fsync(fd) }
    }

    private static func createTruncating(_ path: String) throws(SystemCallError) -> Int32 {
        try SystemCall.blocking("open") { open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
    }

    /// Writes `first` then `second` with `writev(2)`: one call for header and payload, more only after a short
    /// write.
    private static func writeAll(_ fd: Int32, _ first: ArraySlice<UInt8>, _ second: ArraySlice<UInt8>) throws(SystemCallError) {
        var (first, second) = (first, second)
        while !first.isEmpty || !second.isEmpty {
            let written = try first.withUnsafeBytes { a in
                second.withUnsafeBytes { b in
                    var vectors = [
                        iovec(iov_base: UnsafeMutableRawPointer(mutating: a.baseAddress), iov_len: a.count),
                        iovec(iov_base: UnsafeMutableRawPointer(mutating: b.baseAddress), iov_len: b.count),
                    ]
                    return Result { () throws(SystemCallError) -> Int in try SystemCall.blocking("writev") { writev(fd, &vectors, 2) } }
                }
            }.get()
            let fromFirst = min(written, first.count)
            first = first.dropFirst(fromFirst)
            second = second.dropFirst(written - fromFirst)
        }
    }

    /// Rewrites the fixed header (64 bytes at offset 0) in place: the access time and lock count move without
    /// the payload being rewritten. The header CRC covers these bytes, so a torn update reads as corrupt, never
    /// as a record with wrong values.
    static func rewriteFixedHeader(_ path: String, _ fixed: [UInt8], sync: Bool) throws(SystemCallError) {
        let fd = try SystemCall.blocking("open") { open(path, O_WRONLY | O_CLOEXEC) }
        defer { _ = close(fd) }
        try rewriteFixedHeader(fd: fd, fixed, sync: sync)
    }

    /// ``rewriteFixedHeader(_:_:sync:)`` through a descriptor open for writing.
    static func rewriteFixedHeader(fd: Int32, _ fixed: [UInt8], sync: Bool) throws(SystemCallError) {
        var written = 0
        while written < fixed.count {
            written += try SystemCall.blocking("pwrite") {
                fixed.withUnsafeBytes { pwrite(fd, $0.baseAddress! + written, $0.count - written, off_t(written)) }
            }
        }
        if sync { _ = try SystemCall.blocking("fsync") { Glibc.fsync(fd) } }
    }

    /// `fsync(2)` of a directory, so a rename in it is durable.
    static func syncDirectory(_ directory: String) throws(SystemCallError) {
        let fd = try SystemCall.blocking("open") { open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        defer { _ = close(fd) }
        _ = try SystemCall.blocking("fsync") { Glibc.fsync(fd) }
    }

    /// Removes a file; false if it did not exist.
    @discardableResult
    static func unlink(_ path: String) throws(SystemCallError) -> Bool {
        do {
            _ = try SystemCall.blocking("unlink") { Glibc.unlink(path) }
            return true
        } catch where error.errno == ENOENT {
            return false
        }
    }

    /// The length of the file at `path`, or nil if there is none (one `stat`, nothing read).
    static func fileSize(_ path: String) throws(SystemCallError) -> Int64? {
        var info = stat()
        do {
            _ = try SystemCall.blocking("stat") { stat(path, &info) }
        } catch where error.errno == ENOENT {
            return nil
        }
        return Int64(info.st_size)
    }

    /// Creates a directory unless it exists.
    static func makeDirectory(_ path: String) throws(SystemCallError) {
        do {
            _ = try SystemCall.blocking("mkdir") { mkdir(path, 0o755) }
        } catch where error.errno == EEXIST {
            var info = stat()
            _ = try SystemCall.blocking("stat") { stat(path, &info) }
            guard (info.st_mode & S_IFMT) == S_IFDIR else { throw error }
        }
    }

    /// The names in a directory (not `.` and `..`); empty if it does not exist.
    static func list(_ directory: String) throws(SystemCallError) -> [String] {
        var handle: OpaquePointer?
        do {
            _ = try SystemCall.blocking("opendir") { () -> Int32 in
                handle = opendir(directory)
                return handle == nil ? -1 : 0
            }
        } catch where error.errno == ENOENT {
            return []
        }
        guard let handle else { return [] }
        defer { closedir(handle) }
        var names: [String] = []
        while true {
            errno = 0
            var entry: UnsafeMutablePointer<dirent>?
            _ = try SystemCall.blocking("readdir") { () -> Int32 in
                entry = readdir(handle)
                return entry == nil && errno != 0 ? -1 : 0
            }
            guard let entry else { return names }
            // Read in place, up to its NUL: copying `entry.pointee.d_name` would read all 256 bytes of the field,
            // past the end of an entry packed short by `d_reclen` (and past a page for the buffer's last one).
            let field = UnsafeRawPointer(entry) + MemoryLayout<dirent>.offset(of: \dirent.d_name)!
            let name = String(cString: field.assumingMemoryBound(to: CChar.self))
            if name != "." && name != ".." { names.append(name) }
        }
    }
}
