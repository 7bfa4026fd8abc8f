internal import CourierCore
internal import Synchronization

/// A persistent store of records: bytes under a key, with a TTL, a persistent lock count and an access time,
/// one file per key in a directory (format, crash safety and concurrency rules in docs/cache.md).
///
/// Operations on one key are serialised, across tasks and across processes sharing the directory, by an
/// exclusive `flock(2)` on one of 256 lock files chosen by the key's hash; operations on keys in different
/// stripes run in parallel. Each operation is a short run of system calls on the calling task's thread.
/// Missing, expired and corrupt records read as nil; corrupt files are removed and counted.
///
/// With a ``RecordStoreOptions/sizeCap`` the store stays within it as records are stored: every process sharing
/// the directory keeps its total in a `SizeLedger`, and a store that takes the total over the cap collects
/// garbage before it returns, least recently used first (`GarbageCollector`). The directory's files, the
/// collection and the read-only inspection are types of their own (`RecordDirectory`, `GarbageCollector`,
/// `RecordInspector`); this class is the entry point and the one-key operations.
public final class RecordStore: Sendable {
    /// The options the store was opened with.
    public let options: RecordStoreOptions
    private let expiry: ExpiryRule
    private let directory: RecordDirectory
    private let ledger: SizeLedger
    private let collector: GarbageCollector
    private let inspector: RecordInspector
    private let background = Mutex<Task<Void, Never>?>(nil)
    /// The stripes' lock files, kept open (internal for the tests that hold a stripe's lock as the store does).
    var locks: StripeLocks { directory.locks }

    /// Where one key's record lives (internal for the tests that edit record files).
    typealias Location = RecordDirectory.Location

    /// Opens (creating if needed) the store in `options.directory`.
    public init(options: RecordStoreOptions) throws(CacheError) {
        self.options = options
        let components = options.defaultExpiry.components
        let expiryNanoseconds = components.seconds.multipliedReportingOverflow(by: 1_000_000_000)
        self.expiry = ExpiryRule(
            defaultExpiryNanoseconds: expiryNanoseconds.overflow
                ? .max : expiryNanoseconds.partialValue + components.attoseconds / 1_000_000_000
        )
        self.directory = RecordDirectory(root: options.directory, maximumRecordBytes: options.maximumRecordBytes)
        self.ledger = SizeLedger(root: options.directory)
        self.collector = GarbageCollector(directory: directory, options: options, expiry: expiry, ledger: ledger)
        self.inspector = RecordInspector(directory: directory, expiry: expiry, clock: options.clock)
        do {
            try directory.create()
        } catch {
            throw CacheError(key: nil, operation: .open, reason: .system(error))
        }
    }

    deinit {
        background.withLock { $0?.cancel() }
    }

    /// Lifetime counters (this process).
    public var statistics: CacheStatistics {
        directory.statistics.withLock { $0 }
    }

    // MARK: - Records

    /// Stores `data` under `key`, replacing any record there. The lock count becomes 1 if `locked`, else 0 (a
    /// store resets it, as SPTPersistentCache's does); the store and access times become now.
    ///
    /// - Parameters:
    ///   - data: the payload.
    ///   - key: the record's key (1 byte to 64 KiB of UTF-8).
    ///   - ttl: 0 for sliding expiry (``RecordStoreOptions/defaultExpiry`` after the last access), otherwise
    ///     absolute expiry this long after now.
    ///   - locked: whether the record starts locked (lock count 1).
    public func store(_ data: [UInt8], forKey key: String, ttl: Duration = .zero, locked: Bool = false) async throws(CacheError) {
        let overCap = try await LockWaiting.withoutBlockingThePool(.store, key: key, syncing: options.fsync == .durable) { () throws(CacheError) in
            try self.storeNow(data, forKey: key, ttl: ttl, locked: locked)
        }
        guard overCap, let cap = options.sizeCap else { return }
        // The record is stored: a failed trim is counted, not thrown (the next store over the cap tries again).
        do {
            try await LockWaiting.onThreadThatMayWait(.store, key: key) { () throws(CacheError) in try self.collector.trim(cap: cap) }
        } catch {
            directory.statistics.withLock {
                $0.trimFailures += 1
                $0.lastTrimError = error
            }
        }
    }

    /// ``store(_:forKey:ttl:locked:)`` without the suspension point and without the trim: a forked test child
    /// writes through it. True when the store must trim: the directory's total is now over the size cap, or
    /// unknown (a store into a capped directory that no collection has measured yet).
    @discardableResult
    func storeNow(_ data: [UInt8], forKey key: String, ttl: Duration, locked: Bool) throws(CacheError) -> Bool {
        let keyBytes = try RecordDirectory.validated(key, .store)
        guard ttl >= .zero else { throw CacheError(key: key, operation: .store, reason: .invalidTTL) }
        guard RecordHeader.fixedSize + keyBytes.count + data.count <= options.maximumRecordBytes else {
            throw CacheError(key: key, operation: .store, reason: .recordTooLarge(limit: options.maximumRecordBytes))
        }
        let now = options.clock.now()
        let header = RecordHeader(
            lockCount: locked ? 1 : 0, ttlNanoseconds: Self.nanoseconds(ttl), storeTime: now, accessTime: now,
            payloadSize: UInt64(data.count), payloadCRC: CRC32.checksum(data), key: keyBytes
        )
        let fault = options.writeFault?(key)
        let replaced = try directory.serialised(key, keyBytes, .store) { location throws(SystemCallError) -> Int64 in
            let replaced = try RecordFile.fileSize(location.path) ?? 0
            try RecordFile.writeAtomically(
                header.encoded(), data, to: location.path, via: location.path + ".tmp",
                directory: location.stripeDirectory, fsync: options.fsync, fault: fault
            )
            return replaced
        }
        // A ledger that cannot be read or written counts as unknown: a capped store then measures the directory.
        let total = (try? ledger.add(Int64(header.fileSize) - replaced)) ?? nil
        guard let cap = options.sizeCap else { return false }
        return total.map { $0 > cap } ?? true
    }

    /// The record under `key`, or nil if it is missing, expired and unlocked, or corrupt (then it is removed).
    /// Moves the access time to now in place, without rewriting the payload; if that write fails the record is
    /// still returned and ``CacheStatistics/accessTimeWriteFailures`` counts it.
    public func load(_ key: String) async throws(CacheError) -> CacheRecord? {
        try await LockWaiting.withoutBlockingThePool(.load, key: key) { () throws(CacheError) -> CacheRecord? in try self.loadNow(key) }
    }

    private func loadNow(_ key: String) throws(CacheError) -> CacheRecord? {
        let keyBytes = try RecordDirectory.validated(key, .load)
        return try directory.serialised(key, keyBytes, .load) { location throws(SystemCallError) in
            try loadRecord(at: location, keyBytes: keyBytes).record
        }
    }

    /// Lists the records whose key starts with `prefix` and can be returned, lets `choose` pick one key from
    /// them (sorted), and loads it. Nil if none matches or `choose` returns nil. Keys live in the headers, not
    /// the file names, so this reads every record's header.
    public func load(
        keysWithPrefix prefix: String, choosing choose: @Sendable ([String]) -> String?
    ) async throws(CacheError) -> CacheRecord? {
        let keys = try await LockWaiting.onThreadThatMayWait(.load, key: nil) { () throws(CacheError) in try self.keys(withPrefix: prefix) }
        guard !keys.isEmpty, let chosen = choose(keys.sorted()) else { return nil }
        return try await load(chosen)
    }

    /// The keys of the returnable records that start with `prefix` (a scan of every header).
    private func keys(withPrefix prefix: String) throws(CacheError) -> [String] {
        var keys: [String] = []
        let now = options.clock.now()
        try directory.forEachRecordFile(.load) { location throws(SystemCallError) in
            guard let (header, _) = try directory.validHeader(at: location), header.lockCount > 0 || !expiry.isExpired(header, now: now)
            else { return }
            let key = String(decoding: header.key, as: UTF8.self)
            if key.hasPrefix(prefix) { keys.append(key) }
        }
        return keys
    }

    /// Moves the access time of `key` to now (in place). False if the record is missing, corrupt, or expired
    /// and unlocked.
    @discardableResult
    public func touch(_ key: String) async throws(CacheError) -> Bool {
        try await LockWaiting.withoutBlockingThePool(.touch, key: key) { () throws(CacheError) -> Bool in try self.touchNow(key) }
    }

    private func touchNow(_ key: String) throws(CacheError) -> Bool {
        let keyBytes = try RecordDirectory.validated(key, .touch)
        return try directory.serialised(key, keyBytes, .touch) { location throws(SystemCallError) in
            let now = options.clock.now()
            guard var header = try returnableHeader(at: location, keyBytes: keyBytes, now: now) else { return false }
            header.accessTime = now
            try RecordFile.rewriteFixedHeader(location.path, header.encodedFixedPart(), sync: false)
            return true
        }
    }

    /// Adds one to the lock count of `key` and returns the new count, or nil if the record is missing,
    /// corrupt, or expired and unlocked. A locked record may be locked again even when expired (the ancestor
    /// refused that). Does not move the access time.
    @discardableResult
    public func lock(_ key: String) async throws(CacheError) -> UInt32? {
        try await LockWaiting.withoutBlockingThePool(.lock, key: key, syncing: options.fsync == .durable) { () throws(CacheError) in
            try self.changeLockCount(key, by: 1, .lock)
        }
    }

    /// Subtracts one from the lock count of `key` and returns the new count, or nil if the record is missing
    /// or corrupt. Throws ``CacheError/Reason/notLocked`` if the count is already 0.
    @discardableResult
    public func unlock(_ key: String) async throws(CacheError) -> UInt32? {
        try await LockWaiting.withoutBlockingThePool(.unlock, key: key, syncing: options.fsync == .durable) { () throws(CacheError) in
            try self.changeLockCount(key, by: -1, .unlock)
        }
    }

    /// Removes the records under `keys`, locked or not; returns how many existed.
    @discardableResult
    public func remove(_ keys: [String]) async throws(CacheError) -> Int {
        try await LockWaiting.onThreadThatMayWait(.remove, key: nil) { () throws(CacheError) -> Int in try self.removeNow(keys) }
    }

    private func removeNow(_ keys: [String]) throws(CacheError) -> Int {
        var removed = 0
        var bytes: Int64 = 0
        defer { _ = try? ledger.add(-bytes) }
        for key in keys {
            let keyBytes = try RecordDirectory.validated(key, .remove)
            let size = try directory.serialised(key, keyBytes, .remove) { location throws(SystemCallError) -> Int64? in
                guard let size = try RecordFile.fileSize(location.path), try RecordFile.unlink(location.path) else { return nil }
                return size
            }
            if let size {
                removed += 1
                bytes += size
            }
        }
        return removed
    }

    // MARK: - Sizes

    /// The bytes of every record file (headers, keys and payloads; corrupt files too).
    public func totalSize() async throws(CacheError) -> Int64 {
        try await LockWaiting.onThreadThatMayWait(.size, key: nil) { () throws(CacheError) -> Int64 in
            var total: Int64 = 0
            try self.directory.forEachRecordFile(.size) { location throws(SystemCallError) in
                if let (_, size) = try RecordFile.readHeader(location.path) { total += size }
            }
            return total
        }
    }

    /// The bytes of the valid records whose lock count is above 0.
    public func lockedSize() async throws(CacheError) -> Int64 {
        try await LockWaiting.onThreadThatMayWait(.size, key: nil) { () throws(CacheError) -> Int64 in
            var total: Int64 = 0
            try self.directory.forEachRecordFile(.size) { location throws(SystemCallError) in
                if let (header, size) = try self.directory.validHeader(at: location), header.lockCount > 0 { total += size }
            }
            return total
        }
    }

    // MARK: - Garbage collection

    /// Runs garbage collection now: removes temporary files abandoned by dead writers, corrupt files and expired
    /// unlocked records, then evicts unlocked records least recently used first until the store fits
    /// ``RecordStoreOptions/sizeCap`` and the file system keeps ``RecordStoreOptions/minimumFreeFraction`` free.
    /// Locked records are never removed.
    ///
    /// - Parameter verifyingPayloads: also read every record whole and check its payload checksum, removing the
    ///   ones that fail (a locked one too: a corrupt record is never returned, so its lock protects nothing).
    ///   Off by default: a scan then reads headers only (header checksum, key hash, length), and a bad payload is
    ///   found by the first load of its record.
    @discardableResult
    public func collectGarbage(verifyingPayloads: Bool = false) async throws(CacheError) -> GarbageCollectionReport {
        try await LockWaiting.onThreadThatMayWait(.collectGarbage, key: nil) { () throws(CacheError) -> GarbageCollectionReport in
            try self.collector.collect(verifyingPayloads: verifyingPayloads)
        }
    }

    /// Runs ``collectGarbage(verifyingPayloads:)`` every `interval` on a plain task (no run loop) until
    /// ``stopCollectingGarbage()`` or the store's end. Idempotent: a running schedule is replaced. Failures are
    /// counted in ``statistics``.
    public func startCollectingGarbage(every interval: Duration) {
        let task = Task { [weak self] in
            while !Task.isCancelled {
                do { try await Task.sleep(for: interval) } catch { return }
                guard let self, !Task.isCancelled else { return }
                do throws(CacheError) {
                    _ = try await self.collectGarbage()
                } catch {
                    self.directory.statistics.withLock {
                        $0.backgroundFailures += 1
                        $0.lastBackgroundError = error
                    }
                }
            }
        }
        background.withLock { $0?.cancel(); $0 = task }
    }

    /// Stops the schedule of ``startCollectingGarbage(every:)`` and waits for a run under way to finish: once it
    /// returns, no background run is in progress or will start.
    public func stopCollectingGarbage() async {
        let task = background.withLock { task -> Task<Void, Never>? in
            defer { task = nil }
            task?.cancel()
            return task
        }
        await task?.value
    }

    /// Whether a background schedule is running.
    public var isCollectingGarbage: Bool {
        background.withLock { $0 != nil }
    }

    /// Removes every locked record (lock count above 0), and every corrupt file; returns how many records.
    @discardableResult
    public func wipeLocked() async throws(CacheError) -> Int {
        try await LockWaiting.onThreadThatMayWait(.wipe, key: nil) { () throws(CacheError) -> Int in try self.wipe { $0.lockCount > 0 } }
    }

    /// Removes every unlocked record, expired or not, and every corrupt file; returns how many records.
    @discardableResult
    public func wipeUnlocked() async throws(CacheError) -> Int {
        try await LockWaiting.onThreadThatMayWait(.wipe, key: nil) { () throws(CacheError) -> Int in try self.wipe { $0.lockCount == 0 } }
    }

    private func wipe(_ matches: (RecordHeader) -> Bool) throws(CacheError) -> Int {
        var removed = 0
        var bytes: Int64 = 0
        defer { _ = try? ledger.add(-bytes) }
        try directory.forEachRecordFile(.wipe) { location throws(SystemCallError) in
            if let (header, size) = try directory.validHeader(at: location), matches(header), try RecordFile.unlink(location.path) {
                removed += 1
                bytes += size
            }
        }
        return removed
    }

    // MARK: - Inspection (read-only)

    /// Every file of the store, checked without changing anything (no access time moves, nothing is removed):
    /// the records' summaries, and the corrupt files with what is wrong. With `verifyingPayloads` each record is
    /// read whole and its payload checksum checked too; otherwise only the header, name and length.
    public func inspectAll(verifyingPayloads: Bool = false) async throws(CacheError) -> [RecordVerdict] {
        try await LockWaiting.onThreadThatMayWait(.inspect, key: nil) { () throws(CacheError) -> [RecordVerdict] in
            try self.inspector.inspectAll(verifyingPayloads: verifyingPayloads)
        }
    }

    /// The record under `key` checked whole (payload checksum included) without changing anything; nil when
    /// there is no file for it.
    public func inspect(_ key: String) async throws(CacheError) -> RecordVerdict? {
        try await LockWaiting.withoutBlockingThePool(.inspect, key: key) { () throws(CacheError) -> RecordVerdict? in try self.inspector.inspect(key) }
    }

    /// The record under `key`, read whole and checked, without changing anything: no access time moves,
    /// nothing is removed, and an expired record is returned too (what `courier cache` shows). Nil when there is
    /// no file for it or it fails a check.
    public func peek(_ key: String) async throws(CacheError) -> CacheRecord? {
        try await LockWaiting.withoutBlockingThePool(.load, key: key) { () throws(CacheError) -> CacheRecord? in try self.inspector.peek(key) }
    }

    // MARK: - Fingerprints

    /// ``load(_:)`` and the record file's fingerprint, taken under the key's lock after the load (so no other
    /// process can have replaced the file in between): a caller that keeps the record in memory can tell later,
    /// with ``fingerprint(at:)``, whether the file still holds it. The fingerprint is nil where the file system
    /// records no birth time. A corrupt file it removed is said, with why (`courier fetch -v` reports it).
    package func loadWithFingerprint(_ key: String) async throws(CacheError) -> RecordLoad {
        try await LockWaiting.withoutBlockingThePool(.load, key: key) { () throws(CacheError) -> RecordLoad in
            let keyBytes = try RecordDirectory.validated(key, .load)
            return try self.directory.serialised(key, keyBytes, .load) { location throws(SystemCallError) -> RecordLoad in
                let loaded = try self.loadRecord(at: location, keyBytes: keyBytes)
                guard case .found(let record, _) = loaded else { return loaded }
                return .found(record, try RecordFingerprint.of(path: location.path))
            }
        }
    }

    /// Where `key`'s record file is (a hash of the key: computed, nothing read), for ``fingerprint(at:)``.
    package func location(of key: String) throws(CacheError) -> RecordLocation {
        RecordLocation(path: directory.location(ofKey: try RecordDirectory.validated(key, .load)).path)
    }

    /// The fingerprint of the record file at `location` now (one `statx`, no lock, nothing read or changed); nil
    /// when there is no file or the file system records no birth time.
    package func fingerprint(at location: RecordLocation) throws(CacheError) -> RecordFingerprint? {
        do {
            return try RecordFingerprint.of(path: location.path)
        } catch {
            throw CacheError(key: nil, operation: .load, reason: .system(error))
        }
    }

    // MARK: - One record

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        let whole = UInt64(clamping: seconds).multipliedReportingOverflow(by: 1_000_000_000)
        return whole.overflow ? .max : whole.partialValue &+ UInt64(clamping: attoseconds / 1_000_000_000)
    }

    /// The valid header of a known key's record, if the record may be returned at `now` (any unexpired or locked
    /// record when `now` is nil).
    private func returnableHeader(at location: Location, keyBytes: [UInt8], now: Int64?) throws(SystemCallError) -> RecordHeader? {
        guard let (header, _) = try directory.validHeader(at: location) else { return nil }
        guard header.key == keyBytes else {
            try directory.discard(location)
            return nil
        }
        guard let now else { return header }
        return expiry.canBeReturned(header, now: now) ? header : nil
    }

    private func loadRecord(at location: Location, keyBytes: [UInt8]) throws(SystemCallError) -> RecordLoad {
        let loaded = try RecordFile.withOpenedForLoad(location.path, maxBytes: options.maximumRecordBytes) { file throws(SystemCallError) -> RecordLoad in
            let header: RecordHeader
            switch RecordHeader.decodeRecord(header: file.header, payload: file.payload, fileSize: file.fileSize) {
            case .success(let decoded) where decoded.key == keyBytes:
                header = decoded
            case .success:
                try directory.discard(location)
                return .removedCorrupt(.keyMismatch)
            case .failure(let corruption):
                try directory.discard(location)
                return .removedCorrupt(corruption)
            }
            let now = options.clock.now()
            guard expiry.canBeReturned(header, now: now) else { return .missing }
            var moved = header
            moved.accessTime = now
            // A file opened read-only cannot take the new access time: counted like a failed write.
            if !file.writable || (try? RecordFile.rewriteFixedHeader(fd: file.fd, moved.encodedFixedPart(), sync: false)) == nil {
                directory.statistics.withLock { $0.accessTimeWriteFailures += 1 }
            }
            return .found(CacheRecord(
                key: String(decoding: keyBytes, as: UTF8.self), data: file.payload,
                ttl: .nanoseconds(Int64(clamping: header.ttlNanoseconds)), lockCount: header.lockCount,
                storeTime: header.storeTime, accessTime: header.accessTime
            ), nil)
        }
        return loaded ?? .missing
    }

    private func changeLockCount(_ key: String, by delta: Int, _ operation: CacheError.Operation) throws(CacheError) -> UInt32? {
        let keyBytes = try RecordDirectory.validated(key, operation)
        let result: Result<UInt32?, CacheError> = try directory.serialised(key, keyBytes, operation) { location throws(SystemCallError) in
            let now = options.clock.now()
            // Unlock ignores expiry: an expired unlocked record reports `notLocked`, like any unlocked one.
            guard var header = try returnableHeader(at: location, keyBytes: keyBytes, now: delta > 0 ? now : nil) else { return .success(nil) }
            if delta < 0 && header.lockCount == 0 { return .failure(CacheError(key: key, operation: operation, reason: .notLocked)) }
            if delta > 0 && header.lockCount == .max { return .failure(CacheError(key: key, operation: operation, reason: .lockCountOverflow)) }
            header.lockCount = delta > 0 ? header.lockCount + 1 : header.lockCount - 1
            try RecordFile.rewriteFixedHeader(location.path, header.encodedFixedPart(), sync: options.fsync == .durable)
            return .success(header.lockCount)
        }
        return try result.get()
    }
}
