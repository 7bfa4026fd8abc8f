internal import CourierCache
internal import CourierCore
internal import Synchronization

/// Decoded records the HTTP cache read recently, kept in memory in front of the record store, so that a fresh
/// hit costs a `statx` per record instead of a locked read, an access-time write and a decode.
///
/// An entry is used only while the record file's ``RecordFingerprint`` is the one it was read with (a store,
/// by this process or another sharing the directory, renames a new file into place and changes it), and only
/// until the record's absolute expiry. The records' access times, which the store's LRU collection orders by,
/// are moved on disk at most once per ``touchInterval`` per entry. Bounded by bytes, least recently used first.
final class MemoryFront: Sendable {
    /// What a record decodes to.
    enum Value: Sendable {
        case varyNames([String])
        case stored(StoredResponse)

        var bytes: Int {
            switch self {
            case .varyNames(let names): return names.reduce(64) { $0 + $1.utf8.count + 16 }
            case .stored(let stored):
                return stored.body.count + stored.url.utf8.count
                    + stored.headers.reduce(256) { $0 + $1.name.utf8.count + $1.value.utf8.count + 32 }
            }
        }
    }

    struct Entry {
        var location: RecordLocation
        var fingerprint: RecordFingerprint
        var value: Value
        /// The record's absolute expiry (wall-clock nanoseconds), nil for a locked or sliding-expiry record.
        var expiresAt: Int64?
        /// When the record's access time was last moved on disk (wall-clock nanoseconds).
        var touchedAt: Int64
        var lastUse: UInt64
        var bytes: Int
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var bytes = 0
        var tick: UInt64 = 0
    }

    /// The most bytes the entries may take (estimated: bodies, fields, and a fixed overhead each).
    let budget: Int
    /// How often a hit moves the record's access time on disk.
    static let touchInterval: Int64 = 60_000_000_000
    private let state = Mutex(State())

    init(budget: Int) {
        self.budget = budget
    }

    /// Whether the entry of a URL's `Vary` index says it has none and the URL's unvaried record is kept too
    /// (see ``HTTPCache``'s lookup for why its own check then suffices).
    func isUnvaried(index: String, record: String) -> Bool {
        state.withLock { s in
            guard case .varyNames(let names)? = s.entries[index]?.value, names.isEmpty else { return false }
            return s.entries[record] != nil
        }
    }

    /// Where the file of `key`'s entry is, if there is an entry.
    func location(of key: String) -> RecordLocation? {
        state.withLock { $0.entries[key]?.location }
    }

    /// The entry for `key` if it is still the file's content (`current` is the file's fingerprint now) and not
    /// expired at `now`; whether its access time is due to be moved. A stale entry is dropped.
    func use(_ key: String, current: RecordFingerprint?, now: Int64) -> (value: Value, touchDue: Bool)? {
        state.withLock { s -> (Value, Bool)? in
            guard var entry = s.entries[key] else { return nil }
            guard entry.fingerprint == current, entry.expiresAt.map({ now < $0 }) ?? true else {
                s.entries[key] = nil
                s.bytes -= entry.bytes
                return nil
            }
            s.tick += 1
            entry.lastUse = s.tick
            let due = now - entry.touchedAt >= Self.touchInterval
            if due { entry.touchedAt = now }
            s.entries[key] = entry
            return (entry.value, due)
        }
    }

    /// Keeps `value`, read at `now` (which moved the record's access time) from `record` whose file had
    /// `fingerprint`, unless it is too large for the budget.
    func keep(
        _ key: String, _ value: Value, record: CacheRecord, location: RecordLocation, fingerprint: RecordFingerprint, now: Int64
    ) {
        let bytes = value.bytes
        guard bytes <= budget / 8 else { return }
        let ttl = record.ttl.components
        let expiresAt = record.lockCount > 0 || record.ttl == .zero
            ? nil : record.storeTime.addingReportingOverflow(ttl.seconds * 1_000_000_000 + ttl.attoseconds / 1_000_000_000).partialValue
        state.withLock { s in
            s.tick += 1
            if let old = s.entries[key] { s.bytes -= old.bytes }
            s.entries[key] = Entry(
                location: location, fingerprint: fingerprint, value: value, expiresAt: expiresAt, touchedAt: now, lastUse: s.tick,
                bytes: bytes
            )
            s.bytes += bytes
            guard s.bytes > budget else { return }
            // Over budget: drop the least recently used down to three quarters of it (amortised).
            for (oldKey, entry) in s.entries.sorted(by: { $0.value.lastUse < $1.value.lastUse }) where s.bytes > budget * 3 / 4 {
                s.entries[oldKey] = nil
                s.bytes -= entry.bytes
            }
        }
    }

    /// The estimated bytes of the entries kept.
    var keptBytes: Int { state.withLock { $0.bytes } }

    /// Forgets `keys` (written or removed through the cache).
    func forget(_ keys: [String]) {
        state.withLock { s in
            for key in keys {
                if let old = s.entries.removeValue(forKey: key) { s.bytes -= old.bytes }
            }
        }
    }
}
