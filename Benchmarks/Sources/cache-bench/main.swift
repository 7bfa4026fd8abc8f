// cache-bench: CourierCache's RecordStore against SQLite used as a key-value table (issue 10).
//
// The peer is what a user would otherwise pick: SQLite through GRDB, one table
// `kv(key TEXT PRIMARY KEY, value BLOB, ttl, stored, accessed, lock_count)`, WAL mode, a `DatabasePool` (one
// writer, concurrent readers: a `DatabaseQueue` would serialise the 8-task loads, which is not what a user
// who picks WAL gets). One record per call on both sides: a store is one `RecordStore.store` or one
// `INSERT OR REPLACE` in its own write transaction; a load is one `RecordStore.load` or one `SELECT` in a read.
//
// Each round runs, for each record size and each task count, the four store configurations back to back on
// fresh directories / databases (record store `.durable` and `.none`, SQLite `synchronous=FULL` and `NORMAL`),
// then random-key loads over the last set each side stored. Ratios are taken within a round; the report gives
// each ratio's median and range over the rounds. Then `collectGarbage()` over 100,000 small records.
import CourierCache
import CourierCore
import Foundation
import GRDB
import Synchronization

// MARK: - Options

struct Options {
    var directory = FileManager.default.temporaryDirectory.path
    var records = 10_000
    var sizes = [4 << 10, 256 << 10]
    var tasks = [1, 8]
    var rounds = 3
    var gcRecords = 100_000
    var gcRecordSize = 256
    var gcExpiredShare = 0.2
    var skipGC = false
    /// `RecordStoreOptions.collectionThreads` for the GC workload (nil: the store's default).
    var gcThreads: Int?

    init() {
        var args = CommandLine.arguments.dropFirst().makeIterator()
        func int(_ s: String?) -> Int? { s.flatMap { Int($0) } }
        while let a = args.next() {
            switch a {
            case "--dir": directory = args.next() ?? directory
            case "--records": records = int(args.next()) ?? records
            case "--sizes": sizes = (args.next() ?? "").split(separator: ",").compactMap { Int($0) }.map { $0 << 10 }
            case "--tasks": tasks = (args.next() ?? "").split(separator: ",").compactMap { Int($0) }
            case "--rounds": rounds = int(args.next()) ?? rounds
            case "--gc-records": gcRecords = int(args.next()) ?? gcRecords
            case "--no-gc": skipGC = true
            case "--gc-threads": gcThreads = int(args.next())
            default:
                FileHandle.standardError.write(
                    Data(
                        """
                        usage: cache-bench [--dir D] [--records N] [--sizes KiB,KiB] [--tasks 1,8] [--rounds N]
                                           [--gc-records N] [--gc-threads N] [--no-gc]

                        """.utf8
                    )
                )
                exit(2)
            }
        }
    }
}

// MARK: - Helpers

/// SplitMix64: a seeded generator, so every run loads the same key sequence.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A clock the GC workload moves forward, so some records are expired without waiting.
final class MovableClock: Sendable {
    let offset = Atomic<Int64>(0)
    var cacheClock: WallClock {
        WallClock { [self] in WallClock.system.now() + offset.load(ordering: .relaxed) }
    }
}

func key(_ size: Int, _ i: Int) -> String { "https://cdn.example.com/records/\(size >> 10)k/\(i)?v=1" }

func payload(_ size: Int) -> [UInt8] {
    var rng = SplitMix64(state: UInt64(size))
    return (0..<size).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
}

let clock = ContinuousClock()

func seconds(_ d: Duration) -> Double {
    Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}

/// Runs `body(task, indices)` on `tasks` child tasks, task t getting indices t, t + tasks, ... < count; returns
/// the wall time of the whole group.
func timed(
    tasks: Int, count: Int, _ body: @escaping @Sendable (Int, StrideTo<Int>) async throws -> Void
) async throws -> Double {
    let start = clock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for t in 0..<tasks {
            group.addTask { try await body(t, stride(from: t, to: count, by: tasks)) }
        }
        try await group.waitForAll()
    }
    return seconds(clock.now - start)
}

func removeTree(_ path: String) { try? FileManager.default.removeItem(atPath: path) }

func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

func fmt(_ x: Double, _ digits: Int = 2) -> String { String(format: "%.\(digits)f", x) }

// MARK: - The two stores

enum Contender: String, CaseIterable {
    case storeDurable = "store .durable"
    case storeNone = "store .none"
    case sqliteFull = "sqlite FULL"
    case sqliteNormal = "sqlite NORMAL"
    var isSQLite: Bool { self == .sqliteFull || self == .sqliteNormal }
}

/// One side of the comparison, opened on a fresh path.
enum Side: Sendable {
    case store(RecordStore)
    case sqlite(DatabasePool)

    static func open(_ contender: Contender, at path: String) throws -> Side {
        switch contender {
        case .storeDurable, .storeNone:
            var options = RecordStoreOptions(directory: path)
            options.fsync = contender == .storeDurable ? .durable : .none
            return .store(try RecordStore(options: options))
        case .sqliteFull, .sqliteNormal:
            return .sqlite(try openSQLite(path + ".sqlite", synchronous: contender == .sqliteFull ? "FULL" : "NORMAL"))
        }
    }

    func store(_ data: [UInt8], _ blob: Data, forKey key: String) async throws {
        switch self {
        case .store(let store): try await store.store(data, forKey: key)
        case .sqlite(let pool):
            let now = WallClock.system.now()
            try await pool.write { db in
                try db.execute(
                    sql: "INSERT OR REPLACE INTO kv (key, value, ttl, stored, accessed, lock_count) VALUES (?, ?, 0, ?, ?, 0)",
                    arguments: [key, blob, now, now]
                )
            }
        }
    }

    /// The payload's size (a check that the load found it).
    func load(_ key: String) async throws -> Int {
        switch self {
        case .store(let store): return try await store.load(key)?.data.count ?? -1
        case .sqlite(let pool):
            return try await pool.read { db in
                try Data.fetchOne(db, sql: "SELECT value FROM kv WHERE key = ?", arguments: [key])?.count ?? -1
            }
        }
    }
}

func openSQLite(_ path: String, synchronous: String) throws -> DatabasePool {
    let pool = try DatabasePool(path: path)
    // GRDB sets `synchronous = NORMAL` itself when it opens a pool in WAL mode, after `prepareDatabase`, so the
    // setting goes on the writer connection (the only one that commits) once the pool is open, and is checked.
    try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = \(synchronous)") }
    try pool.write { db in
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS kv (
                    key TEXT PRIMARY KEY NOT NULL, value BLOB NOT NULL, ttl INTEGER NOT NULL,
                    stored INTEGER NOT NULL, accessed INTEGER NOT NULL, lock_count INTEGER NOT NULL)
                """
        )
    }
    let mode = try pool.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
    let sync = try pool.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
    precondition(mode == "wal" && sync == (synchronous == "FULL" ? 2 : 1), "SQLite is in \(mode ?? "?")/\(sync ?? -1), not WAL/\(synchronous)")
    return pool
}

func removeSQLite(_ path: String) {
    for suffix in ["", "-wal", "-shm"] { removeTree(path + ".sqlite" + suffix) }
}

// MARK: - Workloads

struct Row {
    var workload: String  // e.g. "store 4K x1"
    var contender: String
    var opsPerSecond: Double
    var bytesPerSecond: Double
}

let options = Options()
let base = options.directory + "/cache-bench-\(getpid())"
try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
defer { removeTree(base) }
print("# cache-bench: GC on \(options.gcThreads.map(String.init) ?? "the default number of") threads")
print("# cache-bench: \(options.records) records per size, sizes \(options.sizes.map { "\($0 >> 10) KiB" }), tasks \(options.tasks), \(options.rounds) rounds, in \(base)")

/// rows[round] for every workload and contender.
var rounds: [[Row]] = []

for round in 0..<options.rounds {
    var rows: [Row] = []
    func record(_ workload: String, _ contender: String, _ count: Int, _ size: Int, _ time: Double) {
        let row = Row(
            workload: workload, contender: contender, opsPerSecond: Double(count) / time,
            bytesPerSecond: Double(count * size) / time
        )
        rows.append(row)
        print(
            "round \(round + 1)  \(workload.padding(toLength: 14, withPad: " ", startingAt: 0))  "
                + "\(contender.padding(toLength: 14, withPad: " ", startingAt: 0))  \(fmt(row.opsPerSecond, 0)) ops/s  "
                + "\(fmt(row.bytesPerSecond / 1e6, 1)) MB/s"
        )
        fflush(nil)  // each row as it is measured, also through a pipe
    }
    for size in options.sizes {
        let data = payload(size)
        let blob = Data(data)
        let n = options.records
        // Stores: each contender on a fresh directory / database, back to back. The last set of each kind
        // (record store, SQLite) is kept for the loads.
        var kept: [Bool: (Side, String)] = [:]
        for tasks in options.tasks {
            for contender in Contender.allCases {
                let path = base + "/\(contender.isSQLite ? "sqlite" : "store")-\(size >> 10)k-\(tasks)-\(contender == .storeDurable || contender == .sqliteFull ? "d" : "n")"
                let side = try Side.open(contender, at: path)
                // Every timed pass starts with nothing pending: the previous pass's write-back and the discards
                // of removed sets (/ is ext4 mounted with `discard`) otherwise land in whichever pass follows.
                sync()
                let time = try await timed(tasks: tasks, count: n) { _, indices in
                    for i in indices { try await side.store(data, blob, forKey: key(size, i)) }
                }
                record("store \(size >> 10)K x\(tasks)", contender.rawValue, n, size, time)
                if let (old, oldPath) = kept[contender.isSQLite] {
                    if case .sqlite(let pool) = old { try pool.close() }
                    if contender.isSQLite { removeSQLite(oldPath) } else { removeTree(oldPath) }
                }
                kept[contender.isSQLite] = (side, path)
            }
        }
        // Loads: random keys over the stored set. Nothing is dropped: both sets were just written and sit in
        // the page cache. sync(2) first, so write-back of the `.none` / NORMAL sets does not overlap the loads,
        // and SQLite's WAL is checkpointed into the database file (its best read path).
        sync()
        for (_, (side, _)) in kept {
            if case .sqlite(let pool) = side { _ = try pool.writeWithoutTransaction { db in try db.checkpoint(.truncate) } }
        }
        for tasks in options.tasks {
            for isSQLite in [false, true] {
                guard let (side, _) = kept[isSQLite] else { continue }
                let time = try await timed(tasks: tasks, count: n) { t, indices in
                    var rng = SplitMix64(state: UInt64(round * 1000 + t))
                    for _ in indices {
                        let found = try await side.load(key(size, Int.random(in: 0..<n, using: &rng)))
                        precondition(found == size, "a load missed")
                    }
                }
                record("load \(size >> 10)K x\(tasks)", isSQLite ? "sqlite" : "store", n, size, time)
            }
        }
        for (isSQLite, (side, path)) in kept {
            if case .sqlite(let pool) = side { try pool.close() }
            if isSQLite { removeSQLite(path) } else { removeTree(path) }
        }
    }
    rounds.append(rows)
}

// MARK: - Garbage collection

/// Seconds for the first `collectGarbage()` (which removes the expired share) and for a second one (a scan
/// that removes nothing), and SQLite's `DELETE ... WHERE expired` over the same rows, as a reference.
var gcFirst: [Double] = []
var gcSecond: [Double] = []
var gcSQLite: [Double] = []
if !options.skipGC {
    let n = options.gcRecords
    let data = payload(options.gcRecordSize)
    let expiredEvery = Int((1 / options.gcExpiredShare).rounded())
    for round in 0..<options.rounds {
        let movable = MovableClock()
        var storeOptions = RecordStoreOptions(directory: base + "/gc-\(round)")
        storeOptions.fsync = .none
        storeOptions.clock = movable.cacheClock
        if let threads = options.gcThreads { storeOptions.collectionThreads = threads }
        let store = try RecordStore(options: storeOptions)
        _ = try await timed(tasks: 8, count: n) { _, indices in
            for i in indices {
                try await store.store(data, forKey: "gc/\(i)", ttl: i % expiredEvery == 0 ? .seconds(1) : .zero)
            }
        }
        movable.offset.store(2_000_000_000, ordering: .relaxed)
        sync()
        var start = clock.now
        let report = try await store.collectGarbage()
        gcFirst.append(seconds(clock.now - start))
        precondition(report.expired == (n + expiredEvery - 1) / expiredEvery, "GC removed \(report.expired)")
        start = clock.now
        let again = try await store.collectGarbage()
        gcSecond.append(seconds(clock.now - start))
        precondition(again.expired == 0)
        removeTree(base + "/gc-\(round)")

        // SQLite reference: the same rows with an expiry column, one indexed DELETE.
        let pool = try openSQLite(base + "/gc-\(round).sqlite", synchronous: "NORMAL")
        let blob = Data(data)
        try pool.write { db in
            try db.execute(sql: "CREATE INDEX kv_ttl ON kv (ttl)")
            let statement = try db.makeStatement(
                sql: "INSERT INTO kv (key, value, ttl, stored, accessed, lock_count) VALUES (?, ?, ?, 0, 0, 0)"
            )
            for i in 0..<n { try statement.execute(arguments: ["gc/\(i)", blob, i % expiredEvery == 0 ? 1 : 0]) }
        }
        sync()
        start = clock.now
        let deleted = try pool.write { db in
            try db.execute(sql: "DELETE FROM kv WHERE ttl > 0")
            return db.changesCount
        }
        gcSQLite.append(seconds(clock.now - start))
        precondition(deleted == report.expired)
        try pool.close()
        removeSQLite(base + "/gc-\(round)")
        print(
            "round \(round + 1)  collectGarbage over \(n) records of \(options.gcRecordSize) B (\(report.expired) expired): "
                + "\(fmt(gcFirst.last!, 3)) s, again \(fmt(gcSecond.last!, 3)) s; SQLite DELETE \(fmt(gcSQLite.last!, 3)) s"
        )
        fflush(nil)
    }
}

// MARK: - Report

func rate(_ round: [Row], _ workload: String, _ contender: String) -> Row? {
    round.first { $0.workload == workload && $0.contender == contender }
}

print("\n## Medians over \(options.rounds) rounds (ops/s; MB = 10^6 bytes of payload)\n")
print("| workload | contender | ops/s | MB/s | range ops/s |")
print("| --- | --- | --- | --- | --- |")
for row in rounds[0] {
    let all = rounds.compactMap { rate($0, row.workload, row.contender) }
    let ops = all.map(\.opsPerSecond)
    print(
        "| \(row.workload) | \(row.contender) | \(fmt(median(ops), 0)) | \(fmt(median(all.map(\.bytesPerSecond)) / 1e6, 1)) | "
            + "\(fmt(ops.min()!, 0))–\(fmt(ops.max()!, 0)) |"
    )
}

struct Pair {
    var title: String
    var prefix: String
    var mine: String
    var peer: String
    var goal: Double?
}
var pairs: [Pair] = []
for size in options.sizes {
    for tasks in options.tasks {
        let s = "\(size >> 10)K x\(tasks)"
        pairs.append(Pair(title: "load \(s)", prefix: "load \(s)", mine: "store", peer: "sqlite", goal: 1.5))
        pairs.append(
            Pair(title: "store \(s), .durable / FULL", prefix: "store \(s)", mine: "store .durable", peer: "sqlite FULL", goal: 1)
        )
        pairs.append(
            Pair(title: "store \(s), .none / NORMAL", prefix: "store \(s)", mine: "store .none", peer: "sqlite NORMAL", goal: 1)
        )
        pairs.append(
            Pair(title: "store \(s), .durable / NORMAL (defaults)", prefix: "store \(s)", mine: "store .durable", peer: "sqlite NORMAL", goal: nil)
        )
    }
}
print("\n## Ratios (record store / SQLite, ops/s, same round): median and range\n")
print("| pair | median | range | goal |")
print("| --- | --- | --- | --- |")
var missed: [String] = []
for pair in pairs {
    let ratios = rounds.compactMap { round -> Double? in
        guard let a = rate(round, pair.prefix, pair.mine), let b = rate(round, pair.prefix, pair.peer) else { return nil }
        return a.opsPerSecond / b.opsPerSecond
    }
    guard !ratios.isEmpty else { continue }
    let m = median(ratios)
    var verdict = "reference"
    if let goal = pair.goal {
        let allMet = ratios.allSatisfy { $0 >= goal }
        verdict = "≥ \(fmt(goal, 1)): " + (m >= goal ? (allMet ? "met" : "met by the median, not every round") : "missed")
        if m < goal { missed.append(pair.title) }
    }
    print("| \(pair.title) | \(fmt(m)) | \(fmt(ratios.min()!))–\(fmt(ratios.max()!)) | \(verdict) |")
}
if !gcFirst.isEmpty {
    let m = median(gcFirst)
    print(
        "| collectGarbage, \(options.gcRecords) records (first run / second run / SQLite DELETE), s | "
            + "\(fmt(m, 3)) / \(fmt(median(gcSecond), 3)) / \(fmt(median(gcSQLite), 3)) | "
            + "\(fmt(gcFirst.min()!, 3))–\(fmt(gcFirst.max()!, 3)) | < 1 s: \(m < 1 ? "met" : "missed") |"
    )
    if m >= 1 { missed.append("collectGarbage") }
}
print("\nGoals missed by the median: \(missed.isEmpty ? "none" : missed.joined(separator: ", "))")
