internal import CourierCore

/// A store's garbage collection: temporary files abandoned by dead writers, corrupt files and expired unlocked
/// records removed, then unlocked records evicted least recently used first down to a size (``EvictionPlan``).
/// Every collection reads every header, so it also settles the ``SizeLedger`` to what it measured.
///
/// Runs on a thread that may wait (``LockWaiting``), its stripes spread over ``RecordStoreOptions/collectionThreads``
/// threads (``StripeWorkers``).
struct GarbageCollector: Sendable {
    let directory: RecordDirectory
    let options: RecordStoreOptions
    let expiry: ExpiryRule
    let ledger: SizeLedger

    /// What a collection trims a store to once a store has taken it over its cap: an eighth below the cap, so
    /// that the next trim (a scan of every header) comes only after another eighth of the cap has been written
    /// (as DiskLruCache trims after a write, amortised over the writes).
    static func trimTarget(cap: Int64) -> Int64 { cap - cap / 8 }

    /// Collects now, evicting down to `sizeTarget` (the options' size cap when nil; no eviction without either).
    func collect(verifyingPayloads: Bool, sizeTarget: Int64? = nil) throws(CacheError) -> GarbageCollectionReport {
        let now = options.clock.now()
        let before = (try? ledger.total()) ?? nil
        let scans = try StripeWorkers.map(try directory.stripes(.collectGarbage), threads: options.collectionThreads) { stripe throws(CacheError) in
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
        var remaining = candidates.reduce(lockedBytes) { $0 + $1.size }
        defer { try? ledger.settle(measured: remaining, before: before) }
        guard let sizeTarget = sizeTarget ?? options.sizeCap else { return report }
        let space: FileSystemSpace
        do {
            space = try FileSystemSpace.of(options.directory)
        } catch {
            throw CacheError(key: nil, operation: .collectGarbage, reason: .system(error))
        }
        let victims = EvictionPlan.victims(
            candidates: candidates, lockedBytes: lockedBytes, sizeCap: sizeTarget, space: space,
            minimumFreeFraction: options.minimumFreeFraction
        )
        // Every planned victim goes unless spared, so the stripes can be worked through in any order.
        let byStripe = Array(Dictionary(grouping: victims) { $0.name.prefix(2) }.values)
        for evicted in try StripeWorkers.map(byStripe, threads: options.collectionThreads, { victims throws(CacheError) in
            try self.evict(victims)
        }) {
            report.add(evicted)
            remaining -= evicted.bytesFreed
        }
        return report
    }

    /// After a store took the ledger's total over `cap`: collects down to ``trimTarget(cap:)``, unless another
    /// trim (this process's or another's) brought the total under the cap while this one waited for its turn.
    func trim(cap: Int64) throws(CacheError) {
        try ledger.whileTrimming { () throws(CacheError) in
            if let total = (try? ledger.total()) ?? nil, total <= cap { return }
            _ = try collect(verifyingPayloads: false, sizeTarget: Self.trimTarget(cap: cap))
        }
    }

    /// One stripe's part of a collection, under its lock: temporary, corrupt and expired files removed, and what
    /// size eviction needs from the rest.
    private func collect(
        _ stripe: Substring, now: Int64, verifyingPayloads: Bool
    ) throws(CacheError) -> (report: GarbageCollectionReport, candidates: [EvictionCandidate], lockedBytes: Int64) {
        var report = GarbageCollectionReport()
        var candidates: [EvictionCandidate] = []
        var lockedBytes: Int64 = 0
        try directory.withStripe(stripe, .collectGarbage) { () throws(SystemCallError) in
            for name in try RecordFile.list(directory.directory(of: stripe)) {
                let path = directory.directory(of: stripe) + "/" + name
                if name.hasSuffix(".tmp") {
                    let size = try RecordFile.readHeader(path)?.fileSize ?? 0
                    if try RecordFile.unlink(path) { report.temporaryFiles += 1; report.bytesFreed += size }
                    continue
                }
                guard RecordDirectory.isRecordName(name) else { continue }
                let location = directory.location(named: name)
                let header: RecordHeader, size: Int64
                switch try directory.readHeader(at: location) {
                case .missing: continue
                case .corrupt(let removedBytes):
                    report.corrupt += 1
                    report.bytesFreed += removedBytes
                    continue
                case .valid(let valid, let validSize): (header, size) = (valid, validSize)
                }
                if verifyingPayloads, !(try directory.payloadIsIntact(at: location)) {
                    try directory.discard(location)
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
        try directory.withStripe(stripe, .collectGarbage) { () throws(SystemCallError) in
            for victim in victims {
                let location = directory.location(named: victim.name)
                guard let (header, _) = try directory.validHeader(at: location), header.lockCount == 0,
                    header.accessTime == victim.accessTime
                else { continue }
                if try RecordFile.unlink(location.path) { report.evicted += 1; report.bytesFreed += victim.size }
            }
        }
        return report
    }
}
