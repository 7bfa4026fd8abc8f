import CourierCache
import CourierTestSupport
import Foundation
import Testing

/// `courier cache` against a real record store made by the test: ls (text and JSON), inspect, verify, gc, clear.
@Suite(.timeLimit(.minutes(1)), .onBlockingThreads) struct CacheCommandTests {
    /// A store with two sound records (one locked), one whose payload is corrupt, and one expired record.
    static func makeStore() async throws -> (String, RecordStore) {
        let directory = FileManager.default.temporaryDirectory.appending(path: "courier-cache-cli-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var options = RecordStoreOptions(directory: directory)
        options.fsync = .none
        let store = try RecordStore(options: options)
        try await store.store(Array("manifest".utf8), forKey: "manifests/home", ttl: .seconds(3600))
        try await store.store(Array(repeating: 9, count: 2000), forKey: "images/logo.png", locked: true)
        try await store.store(Array(repeating: 5, count: 300), forKey: "rotten")
        try await store.store(Array("old".utf8), forKey: "expired", ttl: .nanoseconds(1))
        // Corrupt one payload byte of "rotten": the header stays sound.
        let rotten = try #require(try await store.inspectAll().compactMap { verdict -> String? in
            if case .intact(let s) = verdict, s.key == "rotten" { return s.fileName }
            return nil
        }.first)
        let path = try #require(FileManager.default.enumerator(atPath: directory)?.allObjects
            .compactMap { $0 as? String }.first { $0.hasSuffix(rotten) })
        var bytes = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + path))
        bytes[bytes.count - 1] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: directory + "/" + path))
        return (directory, store)
    }

    @Test func listShowsEveryRecordAndJSONToo() async throws {
        let (directory, _) = try await Self.makeStore()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let text = try await CourierProcess.run(["cache", "ls", directory])
        // The store holds a record whose payload is corrupt: listed as such, and the exit status says so.
        #expect(text.status == 1, "\(text.stderr)")
        #expect(text.stderr.contains("1 corrupt record"), "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 5)
        #expect(lines.first == "KEY\tSIZE\tSTORED\tEXPIRES\tLOCKS\tSTATE\tSTATUS")
        #expect(lines.first { $0.hasPrefix("images/logo.png\t") }?.hasSuffix("\t1\tfresh") == true)
        #expect(lines.first { $0.hasPrefix("expired\t") }?.hasSuffix("\tstale") == true)
        #expect(!lines.contains { $0.hasPrefix("rotten\t") }, "\(lines)")
        #expect(lines.last?.hasSuffix("\t-\t-\t-\t-\tcorrupt (payload checksum mismatch)") == true, "\(lines)")
        let json = try await CourierProcess.run(["cache", "ls", "--json", directory])
        #expect(json.status == 1)
        let objects = try json.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(objects.filter { $0["corrupt"] as? String == "payload checksum mismatch" }.count == 1)
        let manifest = try #require(objects.first { $0["key"] as? String == "manifests/home" })
        #expect(manifest["payloadSize"] as? Int == 8)
        #expect(manifest["ttlSeconds"] as? Double == 3600)
        #expect(manifest["fresh"] as? Bool == true)
    }

    @Test func aSoundStoreListsWithAHeaderAndExits0() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "courier-cache-cli-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try RecordStore(options: RecordStoreOptions(directory: directory))
        try await store.store(Array("manifest".utf8), forKey: "manifests/home", ttl: .seconds(3600))
        let text = try await CourierProcess.run(["cache", "ls", directory])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stderr.isEmpty)
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines == ["KEY\tSIZE\tSTORED\tEXPIRES\tLOCKS\tSTATE\tSTATUS", lines.last ?? ""] && lines.count == 2, "\(lines)")
        #expect(lines.last?.hasPrefix("manifests/home\t") == true)
    }

    @Test func inspectAndVerifyFindTheCorruptPayloadAndChangeNothing() async throws {
        let (directory, store) = try await Self.makeStore()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let good = try await CourierProcess.run(["cache", "inspect", directory, "images/logo.png"])
        #expect(good.status == 0, "\(good.stderr)")
        #expect(good.stdout.contains("locks: 1"))
        #expect(good.stdout.contains("checksums: header and payload intact"))
        let bad = try await CourierProcess.run(["cache", "inspect", directory, "rotten"])
        #expect(bad.status == 1)
        #expect(bad.stdout.contains("corrupt (payload checksum mismatch)"))
        let missing = try await CourierProcess.run(["cache", "inspect", directory, "nothing here"])
        #expect(missing.status == 1)
        let verify = try await CourierProcess.run(["cache", "verify", directory])
        #expect(verify.status == 1)
        #expect(verify.stdout.contains("payload checksum mismatch"))
        #expect(verify.stdout.contains("4 files checked, 1 corrupt"))
        // Nothing was removed by looking.
        #expect(try await store.inspectAll().count == 4)
    }

    @Test func gcRemovesTheExpiredAndWithVerificationTheCorruptThenClearEmptiesIt() async throws {
        let (directory, store) = try await Self.makeStore()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let gc = try await CourierProcess.run(["cache", "gc", directory])
        #expect(gc.status == 0, "\(gc.stderr)")
        #expect(gc.stdout.hasPrefix("removed 1 expired, 0 corrupt"))
        let verifying = try await CourierProcess.run(["cache", "gc", "--verify-payloads", directory])
        #expect(verifying.stdout.hasPrefix("removed 0 expired, 1 corrupt"))
        let capped = try await CourierProcess.run(["cache", "gc", "--max-size", "1KiB", directory])
        #expect(capped.stdout.contains("1 evicted"), "\(capped.stdout)")  // the manifest; the locked logo stays
        #expect(try await store.load("images/logo.png") != nil)
        let clear = try await CourierProcess.run(["cache", "clear", directory])
        #expect(clear.stdout == "removed 1 record\n")
        #expect(try await store.inspectAll().isEmpty)
    }

    @Test func aDirectoryThatIsNotThereSaysWhyWithoutAUsageText() async throws {
        let result = try await CourierProcess.run(["cache", "ls", "/nonexistent/courier-cache"])
        #expect(result.status == 2)
        #expect(result.stderr == "courier cache: cannot open /nonexistent/courier-cache: No such file or directory\n", "\(result.stderr)")
        let file = try await CourierProcess.run(["cache", "ls", "/etc/hostname"])
        #expect(file.stderr == "courier cache: cannot open /etc/hostname: Not a directory\n", "\(file.stderr)")
        let size = try await CourierProcess.run(["cache", "gc", "--max-size", "lots", "/tmp"])
        #expect(size.status == 2)
    }
}
