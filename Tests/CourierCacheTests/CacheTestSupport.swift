import CourierCore
import CourierCrypto
import Foundation
import Synchronization

@testable import CourierCache

/// A clock the test moves by hand, in nanoseconds since the Unix epoch.
final class ManualClock: Sendable {
    private let time: Mutex<Int64>

    init(_ start: Int64) { time = Mutex(start) }

    var now: Int64 { time.withLock { $0 } }
    func advance(nanoseconds: Int64) { time.withLock { $0 += nanoseconds } }
    func advance(seconds: Int64) { advance(nanoseconds: seconds * 1_000_000_000) }
    var cacheClock: WallClock { WallClock { self.now } }
}

/// SplitMix64: a seeded generator, so a shuffled fixture is the same on every run.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A fresh directory under the system's temporary directory, removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init() throws {
        let url = FileManager.default.temporaryDirectory.appending(path: "courier-cache-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        path = url.path
    }

    /// A directory in memory (`/dev/shm`, a tmpfs) where the machine has one, else an ordinary temporary one.
    ///
    /// For tests that write hundreds of megabytes: on a disk, ext4 flushes each file replaced by rename(2) at
    /// once, and the journal commits that follow stall every other test's file operations for seconds.
    /// Page-cache semantics, all that `kill -9` tests depend on, are the same in memory.
    static func inMemory() throws -> TemporaryDirectory {
        guard access("/dev/shm", W_OK) == 0 else { return try TemporaryDirectory() }
        return try TemporaryDirectory(path: "/dev/shm/courier-cache-\(UUID().uuidString)")
    }

    private init(path: String) throws {
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        self.path = url.path
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// The ancestor's test epoch (1488 s) in nanoseconds.
let testEpoch: Int64 = 1488 * 1_000_000_000

extension RecordStore {
    /// A store in `directory` on `clock`, with no fsync (tests do not survive power loss anyway).
    static func forTest(
        _ directory: TemporaryDirectory, clock: ManualClock, configure: (inout RecordStoreOptions) -> Void = { _ in }
    ) throws -> RecordStore {
        var options = RecordStoreOptions(directory: directory.path)
        options.clock = clock.cacheClock
        options.fsync = .none
        configure(&options)
        return try RecordStore(options: options)
    }

    /// The path of the file holding `key`'s record.
    func path(of key: String) -> String {
        Location(root: options.directory, name: SHA256.hex(SHA256.hash(Array(key.utf8)))).path
    }

    /// The decoded header of `key`'s record, straight from disk.
    func rawHeader(of key: String) throws -> RecordHeader {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path(of: key))))
        return try RecordHeader.decode(bytes).get()
    }

    /// The names of every file under the stripe directories (records and temporary files).
    func filesOnDisk() throws -> [String] {
        let manager = FileManager.default
        return try manager.contentsOfDirectory(atPath: options.directory).filter { $0 != "locks" }.flatMap { stripe in
            try manager.contentsOfDirectory(atPath: options.directory + "/" + stripe)
        }.sorted()
    }
}

/// Reads, edits and writes back a file's bytes.
func editFile(_ path: String, _ edit: (inout [UInt8]) -> Void) throws {
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    edit(&bytes)
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// Writes `value` little-endian at `offset`.
func poke<T: FixedWidthInteger>(_ bytes: inout [UInt8], _ offset: Int, _ value: T) {
    withUnsafeBytes(of: value.littleEndian) { raw in
        for (index, byte) in raw.enumerated() { bytes[offset + index] = byte }
    }
}

/// Recomputes the header CRC after an edit, so only the intended check fails.
func refreshHeaderCRC(_ bytes: inout [UInt8]) {
    let keySize = Int(bytes[48]) | Int(bytes[49]) << 8 | Int(bytes[50]) << 16 | Int(bytes[51]) << 24
    let crc = CRC32.checksum(bytes[64..<(64 + keySize)], seed: CRC32.checksum(bytes[0..<60]))
    poke(&bytes, 60, crc)
}
