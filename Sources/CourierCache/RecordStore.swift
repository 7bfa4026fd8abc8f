import CourierCore
import CourierCrypto
import Synchronization

/// A persistent store of records: bytes under a key, with a TTL, a persistent lock count and an access time,
/// one file per key in a directory (format, crash safety and concurrency rules in docs/cache.md).
///
/// Operations on one key are serialised, across tasks and across processes sharing the directory, by an
/// exclusive `flock(2)` on one of 256 lock files chosen by the key's hash; operations on keys in different
/// stripes run in parallel. Each operation is a short run of system calls on the calling task's thread.
/// Missing, expired and corrupt records read as nil; corrupt files are removed and counted.
public final class RecordStore: Sendable {
    /// The options the store was opened with.
    public let options: RecordStoreOptions
    private let expiry: ExpiryRule
    private let state = Mutex(State())
    /// The stripes' lock files, kept open (internal for the tests that hold a stripe's lock as the store does).
    let locks: StripeLocks

    private struct State {
        var statistics = CacheStatistics()
        var background: Task<Void, Never>?
    }

    /// Opens (creating if needed) the store in `options.directory`.
    public init(options: RecordStoreOptions) throws(CacheError) {
        self.options = options
        self.locks = StripeLocks(root: options.directory)
        let components = options.defaultExpiry.components
        let expiryNanoseconds = components.seconds.multipliedReportingOverflow(by: 1_000_000_000)
        self.expiry = ExpiryRule(
            defaultExpiryNanoseconds: expiryNanoseconds.overflow
                ? .max : expiryNanoseconds.partialValue + components.attoseconds / 1_000_000_000
        )
        do {
            try RecordFile.makeDirectory(options.directory)
            try RecordFile.makeDirectory(options.directory + "/locks")
        } catch {
            throw CacheError(key: nil, operation: .open, reason: .system(error))
        }
    }

    deinit {
        state.withLock { $0.background?.cancel() }
    }

    /// Lifetime counters (this process).
    public var statistics: CacheStatistics {
        state.withLock { $0.statistics }
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
        try await withoutBlockingThePool(.store, key: key, syncing: options.fsync == .durable) { () throws(CacheError) in try self.storeNow(data, forKey: key, ttl: ttl, locked: locked) }
    }

    /// ``store(_:forKey:ttl:locked:)`` without the suspension point: a forked test child writes through it.
    func storeNow(_ data: [UInt8], forKey key: String, ttl: Duration, locked: Bool) throws(CacheError) {
        let keyBytes = try validated(key, .store)
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
        try serialised(key, keyBytes, .store) { location throws(SystemCallError) in
            try RecordFile.writeAtomically(
                header.encoded(), data, to: location.path, via: location.path + ".tmp",
                directory: location.stripeDirectory, fsync: options.fsync, fault: fault
            )
        }
    }

    /// The record under `key`, or nil if it is missing, expired and unlocked, or corrupt (then it is removed).
    /// Moves the access time to now in place, without rewriting the payload; if that write fails the record is
    /// still returned and ``CacheStatistics/accessTimeWriteFailures`` counts it.
    public func load(_ key: String) async throws(CacheError) -> CacheRecord? {
        try await withoutBlockingThePool(.load, key: key) { () throws(CacheError) -> CacheRecord? in try self.loadNow(key) }
    }

    private func loadNow(_ key: String) throws(CacheError) -> CacheRecord? {
        let keyBytes = try validated(key, .load)
        return try serialised(key, keyBytes, .load) { location throws(SystemCallError) in
            try loadRecord(at: location, keyBytes: keyBytes)
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
        try forEachRecordFile(.load) { location throws(SystemCallError) in
            guard let (header, _) = try validHeader(at: location), header.lockCount > 0 || !expiry.isExpired(header, now: now)
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
        try await withoutBlockingThePool(.touch, key: key) { () throws(CacheError) -> Bool in try self.touchNow(key) }
    }

    private func touchNow(_ key: String) throws(CacheError) -> Bool {
        let keyBytes = try validated(key, .touch)
        return try serialised(key, keyBytes, .touch) { location throws(SystemCallError) in
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
        try await withoutBlockingThePool(.lock, key: key, syncing: options.fsync == .durable) { () throws(CacheError) in
            try self.changeLockCount(key, by: 1, .lock)
        }
    }

    /// Subtracts one from the lock count of `key` and returns the new count, or nil if the record is missing
    /// or corrupt. Throws ``CacheError/Reason/notLocked`` if the count is already 0.
    @discardableResult
    public func unlock(_ key: String) async throws(CacheError) -> UInt32? {
        try await withoutBlockingThePool(.unlock, key: key, syncing: options.fsync == .durable) { () throws(CacheError) in
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
        for key in keys {
            let keyBytes = try validated(key, .remove)
            if try serialised(key, keyBytes, .remove, { location throws(SystemCallError) in try RecordFile.unlink(location.path) }) {
                removed += 1
            }
        }
        return removed
    }

    // MARK: - Sizes

    /// The bytes of every record file (headers, keys and payloads; corrupt files too).
    public func totalSize() async throws(CacheError) -> Int64 {
        try await LockWaiting.onThreadThatMayWait(.size, key: nil) { () throws(CacheError) -> Int64 in try self.totalSizeNow() }
    }

    private func totalSizeNow() throws(CacheError) -> Int64 {
        var total: Int64 = 0
        try forEachRecordFile(.size) { location throws(SystemCallError) in
            if let (_, size) = try RecordFile.readHeader(location.path) { total += size }
        }
        return total
    }

    /// The bytes of the valid records whose lock count is above 0.
    public func lockedSize() async throws(CacheError) -> Int64 {
        try await LockWaiting.onThreadThatMayWait(.size, key: nil) { () throws(CacheError) -> Int64 in try self.lockedSizeNow() }
    }

    private func lockedSizeNow() throws(CacheError) -> Int64 {
        var total: Int64 = 0
        try forEachRecordFile(.size) { location throws(SystemCallError) in
            if let (header, size) = try validHeader(at: location), header.lockCount > 0 { total += size }
        }
        return total
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
        try await LockWaiting.onThreadThatMayWait(.collectGarbage, key: nil) { () throws(CacheError) -> GarbageCollectionReport in try self.collectGarbageNow(verifyingPayloads: verifyingPayloads) }
    }

    private func collectGarbageNow(verifyingPayloads: Bool) throws(CacheError) -> GarbageCollectionReport {
        let now = options.clock.now()
        let scans = try StripeWorkers.map(try stripes(.collectGarbage), threads: options.collectionThreads) { stripe throws(CacheError) in
            try self.collect(stripe, now: now, verifyingPayloads: verifyingPayloads)
        }
        var report = GarbageCollectionReport()
        var candidates: [EvictionCandidate] = []
        var lockedBytes: Int64 = 0
        for scan in scans {
            report.add(scan.report)
            candidates += scan.candidates
            lockedBytes += scan.lockedBytes
        }
        guard let sizeCap = options.sizeCap else { return report }
        let space: FileSystemSpace
        do {
            space = try FileSystemSpace.of(options.directory)
        } catch {
            throw CacheError(key: nil, operation: .collectGarbage, reason: .system(error))
        }
        let victims = EvictionPlan.victims(
            candidates: candidates, lockedBytes: lockedBytes, sizeCap: sizeCap, space: space,
            minimumFreeFraction: options.minimumFreeFraction
        )
        // Every planned victim goes unless spared, so the stripes can be worked through in any order.
        let byStripe = Array(Dictionary(grouping: victims) { $0.name.prefix(2) }.values)
        for evicted in try StripeWorkers.map(byStripe, threads: options.collectionThreads, { victims throws(CacheError) in
            try self.evict(victims)
        }) {
            report.add(evicted)
        }
        return report
    }

    /// One stripe's part of a collection, under its lock: temporary, corrupt and expired files removed, and what
    /// size eviction needs from the rest.
    private func collect(
        _ stripe: Substring, now: Int64, verifyingPayloads: Bool
    ) throws(CacheError) -> (report: GarbageCollectionReport, candidates: [EvictionCandidate], lockedBytes: Int64) {
        var report = GarbageCollectionReport()
        var candidates: [EvictionCandidate] = []
        var lockedBytes: Int64 = 0
        try withStripe(stripe, .collectGarbage) { () throws(SystemCallError) in
            for name in try RecordFile.list(directory(of: stripe)) {
                let path = directory(of: stripe) + "/" + name
                if name.hasSuffix(".tmp") {
                    let size = try RecordFile.readHeader(path)?.fileSize ?? 0
                    if try RecordFile.unlink(path) { report.temporaryFiles += 1; report.bytesFreed += size }
                    continue
                }
                guard Self.isRecordName(name) else { continue }
                let location = Location(root: options.directory, name: name)
                let header: RecordHeader, size: Int64
                switch try readHeader(at: location) {
                case .missing: continue
                case .corrupt(let removedBytes):
                    report.corrupt += 1
                    report.bytesFreed += removedBytes
                    continue
                case .valid(let valid, let validSize): (header, size) = (valid, validSize)
                }
                if verifyingPayloads, !(try payloadIsIntact(at: location)) {
                    try discard(location)
                    report.corrupt += 1
                    report.bytesFreed += size
                    continue
                }
                if header.lockCount > 0 {
                    lockedBytes += size
                } else if expiry.isExpired(header, now: now) {
                    if try RecordFile.unlink(path) { report.expired += 1; report.bytesFreed += size }
                } else {
                    candidates.append(EvictionCandidate(name: name, size: size, accessTime: header.accessTime))
                }
            }
        }
        return (report, candidates, lockedBytes)
    }

    /// Removes the planned `victims` of one stripe, under its lock, sparing any that another task or process has
    /// locked or used since the scan.
    private func evict(_ victims: [EvictionCandidate]) throws(CacheError) -> GarbageCollectionReport {
        var report = GarbageCollectionReport()
        guard let stripe = victims.first?.name.prefix(2) else { return report }
        try withStripe(stripe, .collectGarbage) { () throws(SystemCallError) in
            for victim in victims {
                let location = Location(root: options.directory, name: victim.name)
                guard let (header, _) = try validHeader(at: location), header.lockCount == 0,
                    header.accessTime == victim.accessTime
                else { continue }
                if try RecordFile.unlink(location.path) { report.evicted += 1; report.bytesFreed += victim.size }
            }
        }
        return report
    }

    // MARK: - Inspection (read-only)

    /// Every file of the store, checked without changing anything (no access time moves, nothing is removed):
    /// the records' summaries, and the corrupt files with what is wrong. With `verifyingPayloads` each record is
    /// read whole and its payload checksum checked too; otherwise only the header, name and length.
    public func inspectAll(verifyingPayloads: Bool = false) async throws(CacheError) -> [RecordVerdict] {
        try await LockWaiting.onThreadThatMayWait(.inspect, key: nil) { () throws(CacheError) -> [RecordVerdict] in try self.inspectAllNow(verifyingPayloads: verifyingPayloads) }
    }

    private func inspectAllNow(verifyingPayloads: Bool) throws(CacheError) -> [RecordVerdict] {
        var verdicts: [RecordVerdict] = []
        let now = options.clock.now()
        try forEachRecordFile(.inspect) { location throws(SystemCallError) in
            if let verdict = try verdict(at: location, verifyingPayload: verifyingPayloads, now: now) { verdicts.append(verdict) }
        }
        return verdicts
    }

    /// The record under `key` checked whole (payload checksum included) without changing anything; nil when
    /// there is no file for it.
    public func inspect(_ key: String) async throws(CacheError) -> RecordVerdict? {
        try await withoutBlockingThePool(.inspect, key: key) { () throws(CacheError) -> RecordVerdict? in try self.inspectNow(key) }
    }

    private func inspectNow(_ key: String) throws(CacheError) -> RecordVerdict? {
        let keyBytes = try validated(key, .inspect)
        let now = options.clock.now()
        return try serialised(key, keyBytes, .inspect) { location throws(SystemCallError) in
            guard let verdict = try verdict(at: location, verifyingPayload: true, now: now) else { return nil }
            if case .intact(let summary) = verdict, summary.key != key { return .corrupt(fileName: location.name, .keyMismatch) }
            return verdict
        }
    }

    /// ``load(_:)`` and the record file's fingerprint, taken under the key's lock after the load (so no other
    /// process can have replaced the file in between): a caller that keeps the record in memory can tell later,
    /// with ``fingerprint(at:)``, whether the file still holds it. The fingerprint is nil where the file system
    /// records no birth time.
    public func loadWithFingerprint(_ key: String) async throws(CacheError) -> (CacheRecord, RecordFingerprint?)? {
        try await withoutBlockingThePool(.load, key: key) { () throws(CacheError) -> (CacheRecord, RecordFingerprint?)? in
            let keyBytes = try self.validated(key, .load)
            return try self.serialised(key, keyBytes, .load) { location throws(SystemCallError) -> (CacheRecord, RecordFingerprint?)? in
                guard let record = try self.loadRecord(at: location, keyBytes: keyBytes) else { return nil }
                return (record, try RecordFingerprint.of(path: location.path))
            }
        }
    }

    /// Where `key`'s record file is (a hash of the key: computed, nothing read), for ``fingerprint(at:)``.
    public func location(of key: String) throws(CacheError) -> RecordLocation {
        let keyBytes = try validated(key, .load)
        return RecordLocation(path: Location(root: options.directory, name: SHA256.hex(SHA256.hash(keyBytes))).path)
    }

    /// The fingerprint of the record file at `location` now (one `statx`, no lock, nothing read or changed); nil
    /// when there is no file or the file system records no birth time.
    public func fingerprint(at location: RecordLocation) throws(CacheError) -> RecordFingerprint? {
        do {
            return try RecordFingerprint.of(path: location.path)
        } catch {
            throw CacheError(key: nil, operation: .load, reason: .system(error))
        }
    }

    /// The record under `key`, read whole and checked, without changing anything: no access time moves,
    /// nothing is removed, and an expired record is returned too (what `courier cache` shows). Nil when there is
    /// no file for it or it fails a check.
    public func peek(_ key: String) async throws(CacheError) -> CacheRecord? {
        try await withoutBlockingThePool(.load, key: key) { () throws(CacheError) -> CacheRecord? in try self.peekNow(key) }
    }

    private func peekNow(_ key: String) throws(CacheError) -> CacheRecord? {
        let keyBytes = try validated(key, .inspect)
        return try serialised(key, keyBytes, .inspect) { location throws(SystemCallError) -> CacheRecord? in
            guard let bytes = try RecordFile.read(location.path, maxBytes: options.maximumRecordBytes),
                case .success(let header) = RecordHeader.decodeRecord(bytes), header.key == keyBytes
            else { return nil }
            return CacheRecord(
                key: key, data: Array(bytes[header.headerSize...]), ttl: .nanoseconds(Int64(clamping: header.ttlNanoseconds)),
                lockCount: header.lockCount, storeTime: header.storeTime, accessTime: header.accessTime
            )
        }
    }

    /// The checks of a load or a scan, reporting instead of removing.
    private func verdict(at location: Location, verifyingPayload: Bool, now: Int64) throws(SystemCallError) -> RecordVerdict? {
        let read: [UInt8]?
        let size: Int64
        if verifyingPayload {
            read = try RecordFile.read(location.path, maxBytes: options.maximumRecordBytes)
            size = Int64(read?.count ?? 0)
        } else {
            let header = try RecordFile.readHeader(location.path)
            read = header?.bytes
            size = header?.fileSize ?? 0
        }
        guard let bytes = read else { return nil }
        let decoded = verifyingPayload ? RecordHeader.decodeRecord(bytes) : RecordHeader.decode(bytes)
        let header: RecordHeader
        switch decoded {
        case .failure(let corruption): return .corrupt(fileName: location.name, corruption)
        case .success(let valid): header = valid
        }
        guard SHA256.hex(SHA256.hash(header.key)) == location.name else { return .corrupt(fileName: location.name, .keyMismatch) }
        guard UInt64(size) == header.fileSize else { return .corrupt(fileName: location.name, .payloadSizeMismatch) }
        return .intact(RecordSummary(
            key: String(decoding: header.key, as: UTF8.self), fileName: location.name, fileSize: size,
            payloadSize: header.payloadSize, lockCount: header.lockCount,
            ttl: .nanoseconds(Int64(clamping: header.ttlNanoseconds)), storeTime: header.storeTime,
            accessTime: header.accessTime, expiryTime: expiry.expiryTime(header), isExpired: expiry.isExpired(header, now: now)
        ))
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
                    self.state.withLock {
                        $0.statistics.backgroundFailures += 1
                        $0.statistics.lastBackgroundError = error
                    }
                }
            }
        }
        state.withLock { $0.background?.cancel(); $0.background = task }
    }

    /// Stops the schedule of ``startCollectingGarbage(every:)`` and waits for a run under way to finish: once it
    /// returns, no background run is in progress or will start.
    public func stopCollectingGarbage() async {
        let task = state.withLock { state -> Task<Void, Never>? in
            defer { state.background = nil }
            state.background?.cancel()
            return state.background
        }
        await task?.value
    }

    /// Whether a background schedule is running.
    public var isCollectingGarbage: Bool {
        state.withLock { $0.background != nil }
    }

    /// Removes every locked record (lock count above 0), and every corrupt file; returns how many records.
    @discardableResult
    public func wipeLocked() async throws(CacheError) -> Int {
        try await LockWaiting.onThreadThatMayWait(.wipe, key: nil) { () throws(CacheError) -> Int in try self.wipeLockedNow() }
    }

    private func wipeLockedNow() throws(CacheError) -> Int {
        try wipe { $0.lockCount > 0 }
    }

    /// Removes every unlocked record, expired or not, and every corrupt file; returns how many records.
    @discardableResult
    public func wipeUnlocked() async throws(CacheError) -> Int {
        try await LockWaiting.onThreadThatMayWait(.wipe, key: nil) { () throws(CacheError) -> Int in try self.wipeUnlockedNow() }
    }

    private func wipeUnlockedNow() throws(CacheError) -> Int {
        try wipe { $0.lockCount == 0 }
    }

    // MARK: - Threads

    /// Runs a one-key operation here when its stripe's lock is free at once, the common case, with no thread hop;
    /// when another task or process holds it, again on a thread that may wait (see ``LockWaiting``). A one-key
    /// operation takes its lock before it changes anything, so the retry starts clean.
    ///
    /// An operation `syncing` (a store, lock or unlock under ``FsyncPolicy/durable``) goes to a thread of its own
    /// at once: its `fsync`s block for milliseconds, which would hold one of the pool's few threads, and on
    /// threads of their own the syncs of concurrent operations overlap instead of queueing behind the pool's
    /// threads (8 tasks storing 4 KiB `.durable` records: 600 ops/s on the pool, 2,600 on threads of their own).
    private func withoutBlockingThePool<T: Sendable>(
        _ operation: CacheError.Operation, key: String?, syncing: Bool = false,
        _ body: @escaping @Sendable () throws(CacheError) -> T
    ) async throws(CacheError) -> T {
        if syncing { return try await LockWaiting.onThreadThatMayWait(operation, key: key, body) }
        let first: Result<T, CacheError> = LockWaiting.$allowed.withValue(false) {
            Result { () throws(CacheError) -> T in try body() }
        }
        if case .failure(let error) = first, LockWaiting.isContention(error) {
            return try await LockWaiting.onThreadThatMayWait(operation, key: key, body)
        }
        return try first.get()
    }

    // MARK: - Internals

    /// Where one key's record lives.
    struct Location {
        /// The hex SHA-256 of the key: the file name.
        var name: String
        var stripe: Substring { name.prefix(2) }
        var stripeDirectory: String
        var path: String

        init(root: String, name: String) {
            self.name = name
            self.stripeDirectory = root + "/" + name.prefix(2)
            self.path = stripeDirectory + "/" + name
        }
    }

    private func directory(of stripe: Substring) -> String { options.directory + "/" + stripe }

    /// Whether `name` is `length` lowercase hex digits: a record's name (64) or a stripe's (2).
    private static func isHexName(_ name: String, length: Int) -> Bool {
        name.utf8.count == length && name.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    private static func isRecordName(_ name: String) -> Bool { isHexName(name, length: 64) }

    private func validated(_ key: String, _ operation: CacheError.Operation) throws(CacheError) -> [UInt8] {
        let bytes = Array(key.utf8)
        guard !bytes.isEmpty, bytes.count <= RecordHeader.maximumKeyBytes else {
            throw CacheError(key: key, operation: operation, reason: .invalidKey)
        }
        return bytes
    }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        let whole = UInt64(clamping: seconds).multipliedReportingOverflow(by: 1_000_000_000)
        return whole.overflow ? .max : whole.partialValue &+ UInt64(clamping: attoseconds / 1_000_000_000)
    }

    /// Runs `body` for `key`'s record holding its stripe's lock; maps failures to ``CacheError``.
    private func serialised<T>(
        _ key: String, _ keyBytes: [UInt8], _ operation: CacheError.Operation,
        _ body: (Location) throws(SystemCallError) -> T
    ) throws(CacheError) -> T {
        let location = Location(root: options.directory, name: SHA256.hex(SHA256.hash(keyBytes)))
        do {
            return try withStripeLock(location.stripe) { () throws(SystemCallError) -> T in try body(location) }
        } catch {
            throw CacheError(key: key, operation: operation, reason: .system(error))
        }
    }

    private func withStripe(
        _ stripe: Substring, _ operation: CacheError.Operation, _ body: () throws(SystemCallError) -> Void
    ) throws(CacheError) {
        do {
            try withStripeLock(stripe, body)
        } catch {
            throw CacheError(key: nil, operation: operation, reason: .system(error))
        }
    }

    /// Runs `body` holding `stripe`'s lock file (see ``StripeLocks``). If the store's directory was deleted under
    /// it, it is created again (the records in it are gone: they read as missing).
    private func withStripeLock<T>(_ stripe: Substring, _ body: () throws(SystemCallError) -> T) throws(SystemCallError) -> T {
        try locks.withExclusiveLock(stripe, body)
    }

    /// The two-hex-digit stripe directories that exist.
    private func stripes(_ operation: CacheError.Operation) throws(CacheError) -> [Substring] {
        do {
            return try RecordFile.list(options.directory).filter { Self.isHexName($0, length: 2) }.sorted().map { Substring($0) }
        } catch {
            throw CacheError(key: nil, operation: operation, reason: .system(error))
        }
    }

    /// Runs `body` for every record file, each stripe under its lock.
    private func forEachRecordFile(
        _ operation: CacheError.Operation, _ body: (Location) throws(SystemCallError) -> Void
    ) throws(CacheError) {
        for stripe in try stripes(operation) {
            try withStripe(stripe, operation) { () throws(SystemCallError) in
                for name in try RecordFile.list(directory(of: stripe)) where Self.isRecordName(name) {
                    try body(Location(root: options.directory, name: name))
                }
            }
        }
    }

    private func wipe(_ matches: (RecordHeader) -> Bool) throws(CacheError) -> Int {
        var removed = 0
        try forEachRecordFile(.wipe) { location throws(SystemCallError) in
            if let (header, _) = try validHeader(at: location), matches(header), try RecordFile.unlink(location.path) {
                removed += 1
            }
        }
        return removed
    }

    /// Removes a corrupt file and counts it.
    private func discard(_ location: Location) throws(SystemCallError) {
        if try RecordFile.unlink(location.path) {
            state.withLock { $0.statistics.corruptRecordsRemoved += 1 }
        }
    }

    /// What reading one record file's header found.
    private enum HeaderRead {
        case missing
        /// The file failed a check and was removed (and counted); it had this many bytes.
        case corrupt(removedBytes: Int64)
        case valid(RecordHeader, size: Int64)
    }

    /// Reads the header of the record at `location` and checks it, its key's hash against the file name, and
    /// the file's length (not the payload CRC: that needs the payload). A corrupt file is removed and counted.
    private func readHeader(at location: Location) throws(SystemCallError) -> HeaderRead {
        guard let (bytes, size) = try RecordFile.readHeader(location.path) else { return .missing }
        guard case .success(let header) = RecordHeader.decode(bytes),
            SHA256.hex(SHA256.hash(header.key)) == location.name, UInt64(size) == header.fileSize
        else {
            try discard(location)
            return .corrupt(removedBytes: size)
        }
        return .valid(header, size: size)
    }

    /// Whether the whole record at `location` passes every check, its payload checksum included (a file too large
    /// to read whole does not).
    private func payloadIsIntact(at location: Location) throws(SystemCallError) -> Bool {
        guard let bytes = try RecordFile.read(location.path, maxBytes: options.maximumRecordBytes) else { return true }
        if case .success = RecordHeader.decodeRecord(bytes) { return true }
        return false
    }

    /// ``readHeader(at:)`` for callers that treat a corrupt record as a missing one.
    private func validHeader(at location: Location) throws(SystemCallError) -> (RecordHeader, Int64)? {
        guard case .valid(let header, let size) = try readHeader(at: location) else { return nil }
        return (header, size)
    }

    /// ``validHeader(at:)`` for a known key, if the record may be returned at `now` (any unexpired or locked
    /// record when `now` is nil).
    private func returnableHeader(at location: Location, keyBytes: [UInt8], now: Int64?) throws(SystemCallError) -> RecordHeader? {
        guard let (header, _) = try validHeader(at: location) else { return nil }
        guard header.key == keyBytes else {
            try discard(location)
            return nil
        }
        guard let now else { return header }
        return expiry.canBeReturned(header, now: now) ? header : nil
    }

    private func loadRecord(at location: Location, keyBytes: [UInt8]) throws(SystemCallError) -> CacheRecord? {
        let loaded = try RecordFile.withOpenedForLoad(location.path, maxBytes: options.maximumRecordBytes) { file throws(SystemCallError) -> CacheRecord? in
            guard case .success(let header) = RecordHeader.decodeRecord(header: file.header, payload: file.payload, fileSize: file.fileSize),
                header.key == keyBytes
            else {
                try discard(location)
                return nil
            }
            let now = options.clock.now()
            guard expiry.canBeReturned(header, now: now) else { return nil }
            var moved = header
            moved.accessTime = now
            // A file opened read-only cannot take the new access time: counted like a failed write.
            if !file.writable || (try? RecordFile.rewriteFixedHeader(fd: file.fd, moved.encodedFixedPart(), sync: false)) == nil {
                state.withLock { $0.statistics.accessTimeWriteFailures += 1 }
            }
            return CacheRecord(
                key: String(decoding: keyBytes, as: UTF8.self), data: file.payload,
                ttl: .nanoseconds(Int64(clamping: header.ttlNanoseconds)), lockCount: header.lockCount,
                storeTime: header.storeTime, accessTime: header.accessTime
            )
        }
        return loaded ?? nil
    }

    private func changeLockCount(_ key: String, by delta: Int, _ operation: CacheError.Operation) throws(CacheError) -> UInt32? {
        let keyBytes = try validated(key, operation)
        let result: Result<UInt32?, CacheError> = try serialised(key, keyBytes, operation) { location throws(SystemCallError) in
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
