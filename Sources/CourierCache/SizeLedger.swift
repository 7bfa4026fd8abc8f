internal import CourierCore

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#endif

/// The bytes of a store's record files as one number that every process sharing the directory keeps, so that a
/// store knows after each write whether the directory is over its cap without listing it.
///
/// The number lives in `locks/size` (16 bytes: the total and its complement, little-endian; anything else reads
/// as unknown) and is changed under an exclusive `flock` of that file, held for one `pread` and one `pwrite`. A
/// store adds its file's size less the size of the file it replaced, a remove or wipe subtracts what it removed,
/// and every garbage collection, which reads every header, settles it to what it measured. It is unknown until
/// the first collection (a store over a capped store's unknown total collects at once, so the first capped store
/// in a directory measures it).
///
/// What can make it wrong errs high, which costs an early collection and nothing else: a corrupt file removed by
/// a load, an expired record removed by hand. It errs low only for a process killed between its rename and its
/// addition (one record, until the next collection) and for files written into the directory by something else.
struct SizeLedger: Sendable {
    /// `locks/size`.
    let path: String
    /// `locks/trim.lock`: held by a store's trimming collection, so that two stores over the cap at once (in one
    /// process or two) collect one after the other, and the second finds the total under the cap and stops.
    let trimLockPath: String

    init(root: String) {
        path = root + "/locks/size"
        trimLockPath = root + "/locks/trim.lock"
    }

    /// The total now; nil while unknown.
    func total() throws(SystemCallError) -> Int64? {
        try update { $0 }
    }

    /// Adds `delta` (negative for removals) and returns the new total; nil, and nothing written, while unknown.
    @discardableResult
    func add(_ delta: Int64) throws(SystemCallError) -> Int64? {
        try update { total in total.map { max(0, $0 &+ delta) } }
    }

    /// Settles the total to `measured`, what a scan found, plus what the other processes added while it ran (the
    /// growth since `before`, the total the scan started from; a scan that started from an unknown total keeps
    /// what it measured). A store counted both by the scan and by its own addition is counted twice: high, never
    /// low.
    func settle(measured: Int64, before: Int64?) throws(SystemCallError) {
        _ = try update { now in
            guard let before, let now else { return measured }
            return measured + max(0, now - before)
        }
    }

    /// Runs `body` holding `locks/trim.lock` (waiting for it: call on a thread that may wait).
    func whileTrimming<T>(_ body: () throws(CacheError) -> T) throws(CacheError) -> T {
        let fd: Int32
        do {
            fd = try Self.openLocked(trimLockPath)
        } catch {
            throw CacheError(key: nil, operation: .store, reason: .system(error))
        }
        defer { _ = close(fd) }
        return try body()
    }

    /// Reads the total under the file's lock, writes `change(total)` when it differs, and returns it.
    private func update(_ change: (Int64?) -> Int64?) throws(SystemCallError) -> Int64? {
        let fd = try Self.openLocked(path)
        defer { _ = close(fd) }  // closing releases the lock
        var bytes = [UInt8](repeating: 0, count: 16)
        let read = try SystemCall.blocking("pread") { bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 16, 0) } }
        let current = read == 16 ? Self.decode(bytes) : nil
        let changed = change(current)
        guard changed != current else { return current }
        if let changed {
            let encoded = Self.encode(changed)
            _ = try SystemCall.blocking("pwrite") { encoded.withUnsafeBytes { pwrite(fd, $0.baseAddress, 16, 0) } }
        } else {
            _ = try SystemCall.blocking("ftruncate") { ftruncate(fd, 0) }
        }
        return changed
    }

    /// Opens `path` (creating it) and takes its exclusive lock, waiting for it.
    private static func openLocked(_ path: String) throws(SystemCallError) -> Int32 {
        let fd = try SystemCall.blocking("open") { open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644) }
        do {
            _ = try SystemCall.blocking("flock") { flock(fd, LOCK_EX) }
        } catch {
            _ = close(fd)
            throw error
        }
        return fd
    }

    static func encode(_ total: Int64) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        for value in [UInt64(bitPattern: total), ~UInt64(bitPattern: total)] {
            for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
        }
        return bytes
    }

    static func decode(_ bytes: [UInt8]) -> Int64? {
        guard bytes.count == 16 else { return nil }
        func word(_ start: Int) -> UInt64 {
            (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[start + $1]) << UInt64($1 * 8) }
        }
        let total = word(0)
        guard word(8) == ~total, Int64(bitPattern: total) >= 0 else { return nil }
        return Int64(bitPattern: total)
    }
}
