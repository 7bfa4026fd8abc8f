internal import CourierCore

/// Looking at records without changing them (what `courier cache` shows): summaries, verdicts and peeks. No
/// access time moves and no corrupt file is removed: a verdict reports what a load or a scan would remove.
struct RecordInspector: Sendable {
    let directory: RecordDirectory
    let expiry: ExpiryRule
    let clock: WallClock

    /// Every record file's verdict, each stripe under its lock. With `verifyingPayloads` each record is read
    /// whole and its payload checksum checked too; otherwise only the header, name and length.
    func inspectAll(verifyingPayloads: Bool) throws(CacheError) -> [RecordVerdict] {
        var verdicts: [RecordVerdict] = []
        let now = clock.now()
        try directory.forEachRecordFile(.inspect) { location throws(SystemCallError) in
            if let verdict = try verdict(at: location, verifyingPayload: verifyingPayloads, now: now) { verdicts.append(verdict) }
        }
        return verdicts
    }

    /// The record under `key` checked whole; nil when there is no file for it.
    func inspect(_ key: String) throws(CacheError) -> RecordVerdict? {
        let keyBytes = try RecordDirectory.validated(key, .inspect)
        let now = clock.now()
        return try directory.serialised(key, keyBytes, .inspect) { location throws(SystemCallError) in
            guard let verdict = try verdict(at: location, verifyingPayload: true, now: now) else { return nil }
            if case .intact(let summary) = verdict, summary.key != key { return .corrupt(fileName: location.name, .keyMismatch) }
            return verdict
        }
    }

    /// The record under `key`, read whole and checked, expired or not; nil when there is no file for it or it
    /// fails a check.
    func peek(_ key: String) throws(CacheError) -> CacheRecord? {
        let keyBytes = try RecordDirectory.validated(key, .inspect)
        return try directory.serialised(key, keyBytes, .inspect) { location throws(SystemCallError) -> CacheRecord? in
            guard let bytes = try RecordFile.read(location.path, maxBytes: directory.maximumRecordBytes),
                case .success(let header) = RecordHeader.decodeRecord(bytes), header.key == keyBytes
            else { return nil }
            return CacheRecord(
                key: key, data: Array(bytes[header.headerSize...]), ttl: .nanoseconds(Int64(clamping: header.ttlNanoseconds)),
                lockCount: header.lockCount, storeTime: header.storeTime, accessTime: header.accessTime
            )
        }
    }

    /// The checks of a load or a scan, reporting instead of removing.
    private func verdict(
        at location: RecordDirectory.Location, verifyingPayload: Bool, now: Int64
    ) throws(SystemCallError) -> RecordVerdict? {
        let read: [UInt8]?
        let size: Int64
        if verifyingPayload {
            read = try RecordFile.read(location.path, maxBytes: directory.maximumRecordBytes)
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
        guard RecordDirectory.fileName(ofKey: header.key) == location.name else { return .corrupt(fileName: location.name, .keyMismatch) }
        guard UInt64(size) == header.fileSize else { return .corrupt(fileName: location.name, .payloadSizeMismatch) }
        return .intact(RecordSummary(
            key: String(decoding: header.key, as: UTF8.self), fileName: location.name, fileSize: size,
            payloadSize: header.payloadSize, lockCount: header.lockCount,
            ttl: .nanoseconds(Int64(clamping: header.ttlNanoseconds)), storeTime: header.storeTime,
            accessTime: header.accessTime, expiryTime: expiry.expiryTime(header), isExpired: expiry.isExpired(header, now: now)
        ))
    }
}
