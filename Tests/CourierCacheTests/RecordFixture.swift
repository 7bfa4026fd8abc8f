import CourierCore
import CourierCrypto
import Foundation

@testable import CourierCache

/// The ancestor's main fixture, ported: records with each TTL and lock state, and records corrupted after
/// the store in each way the format can detect. Keys and payloads come from a fixed seed, and the store
/// order is shuffled by the same seed.
struct RecordFixture {
    struct Entry {
        var key: String
        var payload: [UInt8]
        var ttlSeconds: Int64
        var locked: Bool
        var corruption: RecordCorruption?
    }

    var entries: [Entry] = []

    /// SPTPersistentCacheTests' kParams, then one record per corruption kind.
    static let parameters: [(ttl: Int64, locked: Bool, corruption: RecordCorruption?)] = [
        (0, true, nil), (0, true, nil), (0, false, nil), (0, false, nil), (7200, true, nil), (604_800, true, nil),
        (1495, false, nil), (86400, false, nil), (0, false, nil), (0, false, nil), (0, false, nil), (0, false, nil),
        (0, false, .badMagic), (0, false, .badHeaderSize), (0, false, .payloadSizeMismatch),
        (0, false, .headerChecksumMismatch), (0, false, .truncatedHeader),
        // Beyond the ancestor: it did not checksum the payload, version the format or store the key.
        (0, false, .payloadChecksumMismatch), (0, false, .unsupportedVersion(9)), (0, false, .keyMismatch),
    ]

    init(seed: UInt64 = 1488) {
        var generator = SeededGenerator(state: seed)
        for (index, parameter) in Self.parameters.enumerated() {
            let hash = SHA256.hex(SHA256.hash(Array("fixture-\(index)-\(generator.next())".utf8)))
            let payload = (0..<Int.random(in: 1...3000, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            // Every key shares a prefix, as hex image keys do; three share a longer one.
            let key = (index < 3 ? "ab" : "cd") + String(hash.prefix(38))
            entries.append(Entry(key: key, payload: payload, ttlSeconds: parameter.ttl, locked: parameter.locked, corruption: parameter.corruption))
        }
        entries.shuffle(using: &generator)
    }

    var valid: [Entry] { entries.filter { $0.corruption == nil } }
    var corrupt: [Entry] { entries.filter { $0.corruption != nil } }
    /// The records a header-only scan (garbage collection, wipes, sizes) finds valid: the payload checksum is
    /// checked by loads, which read the payload.
    var headerValid: [Entry] { entries.filter { $0.corruption == nil || $0.corruption == .payloadChecksumMismatch } }
    /// The corrupt records a header-only scan finds.
    var headerCorrupt: [Entry] { entries.filter { $0.corruption != nil && $0.corruption != .payloadChecksumMismatch } }

    /// Stores every entry, then corrupts the ones that ask for it.
    func install(in store: RecordStore) async throws {
        for entry in entries {
            try await store.store(entry.payload, forKey: entry.key, ttl: .seconds(entry.ttlSeconds), locked: entry.locked)
        }
        var generator = SeededGenerator(state: 99)
        for entry in corrupt {
            let path = store.path(of: entry.key)
            switch entry.corruption! {
            case .badMagic: try editFile(path) { poke(&$0, 0, UInt32(0xFFFF_5454)) }
            case .badHeaderSize:
                try editFile(path) { poke(&$0, 6, UInt16(64 + 1 + Int.random(in: 0..<106, using: &generator))); refreshHeaderCRC(&$0) }
            case .payloadSizeMismatch: try editFile(path) { poke(&$0, 40, UInt64(entry.payload.count + 7)); refreshHeaderCRC(&$0) }
            case .headerChecksumMismatch: try editFile(path) { $0[60] &+= 5 }
            case .unknownFields: try editFile(path) { poke(&$0, 12, UInt32(1)); refreshHeaderCRC(&$0) }
            case .truncatedHeader: try editFile(path) { $0 = Array($0.prefix(15)) }
            case .payloadChecksumMismatch: try editFile(path) { $0[$0.count - 1] ^= 0x01 }
            case .unsupportedVersion(let version): try editFile(path) { poke(&$0, 4, version); refreshHeaderCRC(&$0) }
            case .keyMismatch:
                // Another key's valid record under this key's name: a moved file, or a hash collision.
                let other = valid[0]
                try FileManager.default.removeItem(atPath: path)
                try FileManager.default.copyItem(atPath: store.path(of: other.key), toPath: path)
            }
        }
    }
}
