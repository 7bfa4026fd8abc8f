internal import CourierCore
internal import CourierCrypto
internal import Synchronization

/// The store's directory: where each key's file lives, the stripes and their locks, and the header checks every
/// operation makes before it trusts a file. ``RecordStore``, ``GarbageCollector`` and ``RecordInspector`` work
/// through it; it knows nothing of expiry or sizes.
final class RecordDirectory: Sendable {
    /// The store's directory.
    let root: String
    /// The stripes' lock files, kept open.
    let locks: StripeLocks
    /// The largest record file a whole read takes.
    let maximumRecordBytes: Int
    /// The store's lifetime counters (this process), moved by whoever finds something to count.
    let statistics = Mutex(CacheStatistics())

    init(root: String, maximumRecordBytes: Int) {
        self.root = root
        self.locks = StripeLocks(root: root)
        self.maximumRecordBytes = maximumRecordBytes
    }

    /// Creates the directory and its `locks` directory unless they exist.
    func create() throws(SystemCallError) {
        try RecordFile.makeDirectory(root)
        try RecordFile.makeDirectory(root + "/locks")
    }

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

    /// The location of the record of a key with these UTF-8 bytes.
    func location(ofKey keyBytes: [UInt8]) -> Location {
        Location(root: root, name: Self.fileName(ofKey: keyBytes))
    }

    /// The one rule naming a record's file: the SHA-256 of its key, in hex (what a file's header must match).
    static func fileName(ofKey keyBytes: [UInt8]) -> String {
        SHA256.hex(SHA256.hash(keyBytes))
    }

    func location(named name: String) -> Location { Location(root: root, name: name) }

    func directory(of stripe: Substring) -> String { root + "/" + stripe }

    /// Whether `name` is `length` lowercase hex digits: a record's name (64) or a stripe's (2).
    private static func isHexName(_ name: String, length: Int) -> Bool {
        name.utf8.count == length && name.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    static func isRecordName(_ name: String) -> Bool { isHexName(name, length: 64) }

    /// The key's UTF-8 bytes, or ``CacheError/Reason/invalidKey`` when it is empty or too long.
    static func validated(_ key: String, _ operation: CacheError.Operation) throws(CacheError) -> [UInt8] {
        let bytes = Array(key.utf8)
        guard !bytes.isEmpty, bytes.count <= RecordHeader.maximumKeyBytes else {
            throw CacheError(key: key, operation: operation, reason: .invalidKey)
        }
        return bytes
    }

    // MARK: - Locks

    /// Runs `body` for `key`'s record holding its stripe's lock; maps failures to ``CacheError``.
    func serialised<T>(
        _ key: String, _ keyBytes: [UInt8], _ operation: CacheError.Operation,
        _ body: (Location) throws(SystemCallError) -> T
    ) throws(CacheError) -> T {
        let location = location(ofKey: keyBytes)
        do {
            return try locks.withExclusiveLock(location.stripe) { () throws(SystemCallError) -> T in try body(location) }
        } catch {
            throw CacheError(key: key, operation: operation, reason: .system(error))
        }
    }

    /// Runs `body` holding `stripe`'s lock file (see ``StripeLocks``; a deleted directory is created again, the
    /// records in it gone); maps failures to ``CacheError``.
    func withStripe(
        _ stripe: Substring, _ operation: CacheError.Operation, _ body: () throws(SystemCallError) -> Void
    ) throws(CacheError) {
        do {
            try locks.withExclusiveLock(stripe, body)
        } catch {
            throw CacheError(key: nil, operation: operation, reason: .system(error))
        }
    }

    /// The two-hex-digit stripe directories that exist.
    func stripes(_ operation: CacheError.Operation) throws(CacheError) -> [Substring] {
        do {
            return try RecordFile.list(root).filter { Self.isHexName($0, length: 2) }.sorted().map { Substring($0) }
        } catch {
            throw CacheError(key: nil, operation: operation, reason: .system(error))
        }
    }

    /// Runs `body` for every record file, each stripe under its lock.
    func forEachRecordFile(
        _ operation: CacheError.Operation, _ body: (Location) throws(SystemCallError) -> Void
    ) throws(CacheError) {
        for stripe in try stripes(operation) {
            try withStripe(stripe, operation) { () throws(SystemCallError) in
                for name in try RecordFile.list(directory(of: stripe)) where Self.isRecordName(name) {
                    try body(location(named: name))
                }
            }
        }
    }

    // MARK: - Checked reads

    /// Removes a corrupt file and counts it.
    func discard(_ location: Location) throws(SystemCallError) {
        if try RecordFile.unlink(location.path) {
            statistics.withLock { $0.corruptRecordsRemoved += 1 }
        }
    }

    /// What reading one record file's header found.
    enum HeaderRead {
        case missing
        /// The file failed a check and was removed (and counted); it had this many bytes.
        case corrupt(removedBytes: Int64)
        case valid(RecordHeader, size: Int64)
    }

    /// Reads the header of the record at `location` and checks it, its key's hash against the file name, and
    /// the file's length (not the payload CRC: that needs the payload). A corrupt file is removed and counted.
    func readHeader(at location: Location) throws(SystemCallError) -> HeaderRead {
        guard let (bytes, size) = try RecordFile.readHeader(location.path) else { return .missing }
        guard case .success(let header) = RecordHeader.decode(bytes),
            Self.fileName(ofKey: header.key) == location.name, UInt64(size) == header.fileSize
        else {
            try discard(location)
            return .corrupt(removedBytes: size)
        }
        return .valid(header, size: size)
    }

    /// ``readHeader(at:)`` for callers that treat a corrupt record as a missing one.
    func validHeader(at location: Location) throws(SystemCallError) -> (RecordHeader, Int64)? {
        guard case .valid(let header, let size) = try readHeader(at: location) else { return nil }
        return (header, size)
    }

    /// Whether the whole record at `location` passes every check, its payload checksum included (a file too large
    /// to read whole does not).
    func payloadIsIntact(at location: Location) throws(SystemCallError) -> Bool {
        guard let bytes = try RecordFile.read(location.path, maxBytes: maximumRecordBytes) else { return true }
        if case .success = RecordHeader.decodeRecord(bytes) { return true }
        return false
    }
}
