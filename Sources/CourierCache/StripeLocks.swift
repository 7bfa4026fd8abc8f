internal import CourierCore
internal import Synchronization

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#endif

/// The lock files of one store's 256 stripes, with their descriptors kept open between operations.
///
/// Opening a lock file per operation (a path lookup, an `open` and a `close` around every store and load) was a
/// large share of a small store's cost. Here an operation checks out an idle descriptor of its stripe (or opens
/// one when none is idle), takes `flock(LOCK_EX)` on it, and afterwards unlocks it (`LOCK_UN`) and puts it back.
/// A descriptor is never used by two operations at once, so each holder still has its own open file
/// description, and two tasks of one process exclude each other exactly as two processes do: the cache changes
/// how often a lock file is opened, not who excludes whom.
///
/// Three things could make a kept descriptor lie, and each is checked:
/// - The lock file was removed (the store's directory deleted behind its back): a lock on an unlinked file
///   excludes nobody who opens the path now. After taking the lock, `fstat` must show a link count above 0;
///   otherwise the descriptor is closed and the path opened (and its directories created) again.
/// - The process forked: the child shares its parent's open file descriptions, and with them their locks, so
///   the child's operations would not exclude the parent's (and a child killed mid-operation would leave the
///   shared description locked). A process other than the one that filled the cache bypasses it: it opens,
///   locks and closes per operation, as the store did before it had a cache.
/// - The process runs out of descriptors: on `EMFILE`/`ENFILE` the idle descriptors are closed and the open
///   tried once more.
///
/// At most ``idlePerStripe`` descriptors per stripe are kept (so at most 256 × that per store); more concurrent
/// operations on one stripe open and close their own.
final class StripeLocks: Sendable {
    /// Idle descriptors kept per stripe; one covers operations that follow one another on a stripe.
    static let idlePerStripe = 1

    private let root: String
    private let directory: String
    private let owner: pid_t
    /// Idle (unlocked) descriptors, by stripe number.
    private let idle: Mutex<[[Int32]]>

    /// The lock files of the store in `root` (in `root/locks`, created on demand).
    init(root: String) {
        self.root = root
        self.directory = root + "/locks"
        self.owner = getpid()
        self.idle = Mutex(Array(repeating: [], count: 256))
    }

    deinit {
        idle.withLock { stripes in
            for fd in stripes.joined() { _ = close(fd) }
        }
    }

    /// The lock file of a stripe (two lowercase hex digits).
    func path(of stripe: Substring) -> String { directory + "/\(stripe).lock" }

    /// Runs `body` holding `stripe`'s exclusive lock. Where ``LockWaiting/allowed`` is false and another holder
    /// has it, throws `flock` / `EWOULDBLOCK` without waiting (see ``LockWaiting``).
    func withExclusiveLock<T>(_ stripe: Substring, _ body: () throws(SystemCallError) -> T) throws(SystemCallError) -> T {
        let number = Int(stripe, radix: 16) ?? 0
        let cached = try SystemCall.blocking("getpid") { getpid() } == owner
        let fd = try acquire(stripe, number, cached: cached)
        defer { release(fd, number, cached: cached) }
        return try body()
    }

    /// A descriptor of `stripe`'s lock file, locked, on a file that is still linked.
    private func acquire(_ stripe: Substring, _ number: Int, cached: Bool) throws(SystemCallError) -> Int32 {
        while true {
            let idle = cached ? takeIdle(number) : nil
            let fd: Int32
            if let idle { fd = idle } else { fd = try openLockFile(stripe) }
            do throws(SystemCallError) {
                if LockWaiting.allowed {
                    _ = try SystemCall.blocking("flock") { flock(fd, LOCK_EX) }
                } else if try SystemCall.run("flock", wouldBlockIsValue: true, { flock(fd, LOCK_EX | LOCK_NB) }) == nil {
                    // Taken by another task or process: the caller retries where it may wait (see LockWaiting).
                    putBack(fd, number, cached: cached)
                    throw SystemCallError(call: "flock", errno: EWOULDBLOCK)
                }
                var info = stat()
                _ = try SystemCall.blocking("fstat") { fstat(fd, &info) }
                if info.st_nlink > 0 { return fd }
            } catch where !(error.call == "flock" && error.errno == EWOULDBLOCK) {
                _ = close(fd)
                throw error
            }
            _ = close(fd)  // Unlinked under us: closing releases the lock on the orphan; open the path anew.
        }
    }

    /// Unlocks `fd` and keeps it for the next operation on its stripe (or closes it, which also unlocks).
    private func release(_ fd: Int32, _ number: Int, cached: Bool) {
        if cached, (try? SystemCall.blocking("flock") { flock(fd, LOCK_UN) }) != nil {
            putBack(fd, number, cached: true)
        } else {
            _ = close(fd)
        }
    }

    private func takeIdle(_ number: Int) -> Int32? {
        idle.withLock { $0[number].popLast() }
    }

    private func putBack(_ fd: Int32, _ number: Int, cached: Bool) {
        guard cached else { _ = close(fd); return }
        let kept = idle.withLock { stripes in
            guard stripes[number].count < Self.idlePerStripe else { return false }
            stripes[number].append(fd)
            return true
        }
        if !kept { _ = close(fd) }
    }

    /// Opens (creating it, and the directories above it, if needed) `stripe`'s lock file.
    private func openLockFile(_ stripe: Substring) throws(SystemCallError) -> Int32 {
        let lockPath = path(of: stripe)
        var retried = false
        while true {
            do {
                return try SystemCall.blocking("open") { open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644) }
            } catch where !retried && error.errno == ENOENT {
                // The store's directory was deleted under it: create it again (the records in it are gone).
                try RecordFile.makeDirectory(root)
                try RecordFile.makeDirectory(directory)
            } catch where !retried && (error.errno == EMFILE || error.errno == ENFILE) {
                closeIdle()
            }
            retried = true
        }
    }

    /// Closes every idle descriptor (they are opened again on demand).
    func closeIdle() {
        let fds = idle.withLock { stripes -> [Int32] in
            defer { stripes = Array(repeating: [], count: 256) }
            return Array(stripes.joined())
        }
        for fd in fds { _ = close(fd) }
    }
}
