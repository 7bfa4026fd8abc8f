import CourierCore
import CourierTestSupport
import Foundation
import Testing

/// `courier fetch --cache-dir` and `--offline`: the HTTP cache through the command, against a loopback server.
@Suite(.timeLimit(.minutes(1)), .onBlockingThreads) struct FetchCacheTests {
    /// A stored response whose payload was damaged on disk: `cache ls` lists it as corrupt (exit 1), and the next
    /// fetch removes it, fetches anew and says so under -v.
    @Test func aCorruptStoredResponseIsListedAndFetchSaysItRemovedIt() async throws {
        let server = try RecordingServer { index, _ in .init(headers: [("Cache-Control", "max-age=60")], body: "body \(index)") }
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        let dir = files.path("corrupt")
        #expect(try await CourierProcess.run(["fetch", "--cache-dir", dir, server.url("/a")]).status == 0)
        let json = try await CourierProcess.run(["cache", "ls", "--json", dir])
        let objects = try json.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        let file = try #require(objects.first { $0["http"] != nil }?["file"] as? String, "\(json.stdout)")
        let path = try #require(FileManager.default.enumerator(atPath: dir)?.allObjects.compactMap { $0 as? String }.first { $0.hasSuffix(file) })
        var bytes = try Data(contentsOf: URL(fileURLWithPath: dir + "/" + path))
        bytes[bytes.count - 1] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: dir + "/" + path))

        let list = try await CourierProcess.run(["cache", "ls", dir])
        #expect(list.status == 1, "\(list.stdout)")
        #expect(list.stdout.contains("\(file)\t-\t-\t-\t-\tcorrupt (payload checksum mismatch)"), "\(list.stdout)")

        let again = try await CourierProcess.run(["fetch", "-v", "--cache-dir", dir, "--json-report", "-", server.url("/a")])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout == "body 1")
        #expect(again.stderr.contains("cache miss (a corrupt stored response was removed: payload checksum mismatch)"), "\(again.stderr)")
        #expect(try FetchTestFiles.reports(again.stderr).first?["attempts"] as? Int == 1)
        #expect(server.requests.count == 2)
        // Stored anew: the list is sound again.
        #expect(try await CourierProcess.run(["cache", "ls", dir]).status == 0)
    }

    @Test func withoutAPolicyEveryHostIsCachedAndTheReportSaysHowEachURLWasAnswered() async throws {
        let server = try RecordingServer { index, _ in .init(headers: [("Cache-Control", "max-age=60")], body: "v\(index)") }
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        // The directory does not exist yet: fetch creates it.
        let dir = files.path("cache/http")
        let first = try await CourierProcess.run(["fetch", "--cache-dir", dir, "--json-report", "-", server.url("/a")])
        #expect(first.status == 0, "\(first.stderr)")
        let second = try await CourierProcess.run(["fetch", "--cache-dir", dir, "--json-report", "-", server.url("/a")])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(first.stdout == "v0" && second.stdout == "v0")
        #expect(try FetchTestFiles.reports(first.stderr).first?["cache"] as? String == "miss")
        #expect(try FetchTestFiles.reports(first.stderr).first?["attempts"] as? Int == 1)
        let report = try #require(try FetchTestFiles.reports(second.stderr).first)
        #expect(report["cache"] as? String == "hit")
        #expect(report["bytesReceived"] as? Int == 0)
        // A fresh hit sends nothing: no attempt was made.
        #expect(report["attempts"] as? Int == 0)
        #expect(server.requests.count == 1)

        // Without --cache-dir the key is there, null.
        let plain = try await CourierProcess.run(["fetch", "--json-report", "-", server.url("/a")])
        let uncached = try #require(try FetchTestFiles.reports(plain.stderr).first)
        #expect(uncached.keys.contains("cache"))
        #expect(uncached["cache"] is NSNull)
    }

    @Test func severalConcurrentFetchesOfOneURLAreOneMissAndTheRestCoalesced() async throws {
        let server = try RecordingServer { _, _ in .init(headers: [("Cache-Control", "max-age=60")], body: "same", delay: .milliseconds(300)) }
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        let url = server.url("/c")
        let result = try await CourierProcess.run(
            ["fetch", "--cache-dir", files.path("c"), "--parallel", "3", "--json-report", "-", url, url, url]
        )
        #expect(result.status == 0, "\(result.stderr)")
        let kinds = try FetchTestFiles.reports(result.stderr).compactMap { $0["cache"] as? String }
        // Which of the three leads is a race between their tasks; exactly one does.
        #expect(kinds.sorted() == ["coalesced", "coalesced", "miss"])
        #expect(server.requests.count == 1)
    }

    @Test func offlineAnswersFromTheCacheStaleIncludedAndExits75WhenNothingIsStored() async throws {
        let server = try RecordingServer { _, _ in .init(headers: [("Cache-Control", "max-age=60"), ("Age", "100")], body: "old") }
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        let dir = files.path("offline")
        _ = try await CourierProcess.run(["fetch", "--cache-dir", dir, server.url("/s")])
        let stale = try await CourierProcess.run(["fetch", "--cache-dir", dir, "--offline", "--json-report", "-", server.url("/s")])
        #expect(stale.status == 0, "\(stale.stderr)")
        #expect(stale.stdout == "old")
        #expect(try FetchTestFiles.reports(stale.stderr).first?["cache"] as? String == "stale")
        let missing = try await CourierProcess.run(["fetch", "--cache-dir", dir, "--offline", "--json-report", "-", server.url("/never")])
        #expect(missing.status == 75)
        let report = try #require(try FetchTestFiles.reports(missing.stderr).first)
        #expect((report["error"] as? [String: Any])?["kind"] as? String == "offline")
        #expect(server.requests.count == 1)

        let usage = try await CourierProcess.run(["fetch", "--offline", server.url("/s")])
        #expect(usage.status == 64 || usage.status == 2)
        #expect(usage.stderr.contains("--cache-dir"))
    }

    @Test func withAPolicyOnlyServicesWithCacheAreCached() async throws {
        let server = try RecordingServer { index, _ in .init(headers: [("Cache-Control", "max-age=60")], body: "v\(index)") }
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        let policy = try files.write("policy.yaml", FetchTestFiles.cachingPolicy("{ ttl: 1m }"))
        let dir = files.path("p")
        let cached = server.url("/x")
        let unclaimed = server.localhostURL("/x")
        let result = try await CourierProcess.run(
            ["fetch", "--policy", policy, "--cache-dir", dir, "--json-report", "-", cached, cached, unclaimed, unclaimed]
        )
        #expect(result.status == 0, "\(result.stderr)")
        let kinds = try FetchTestFiles.reports(result.stderr).map { $0["cache"] as? String }
        #expect(kinds == ["miss", "hit", nil, nil])
        #expect(server.requests.count == 3)
    }

    @Test func cacheListAndInspectShowTheStoredHTTPResponses() async throws {
        let server = try RecordingServer { _, request in
            request.path == "/fresh"
                ? .init(headers: [("Cache-Control", "max-age=600"), ("Vary", "Accept-Language")], body: "fresh body")
                : .init(headers: [("Cache-Control", "max-age=60"), ("Age", "100"), ("ETag", "\"e\"")], body: "stale body")
        }
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        let dir = files.path("ls")
        let fetched = try await CourierProcess.run(
            ["fetch", "--cache-dir", dir, "-H", "Accept-Language: de", server.url("/fresh"), server.url("/stale")]
        )
        #expect(fetched.status == 0, "\(fetched.stderr)")
        let list = try await CourierProcess.run(["cache", "ls", dir])
        #expect(list.status == 0, "\(list.stderr)")
        let lines = list.stdout.split(separator: "\n").map(String.init)
        let fresh = try #require(lines.first { $0.hasPrefix("GET \(server.url("/fresh")) [accept-language: de]\t") }, "\(lines)")
        #expect(fresh.hasSuffix("\t0\tfresh\t200"))
        let stale = try #require(lines.first { $0.hasPrefix("GET \(server.url("/stale"))\t") }, "\(lines)")
        #expect(stale.hasSuffix("\tstale\t200"))
        let json = try await CourierProcess.run(["cache", "ls", "--json", dir])
        let objects = try json.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        let http = try #require(objects.compactMap { $0["http"] as? [String: Any] }.first { $0["url"] as? String == server.url("/fresh") })
        #expect(http["status"] as? Int == 200)
        #expect((http["varied"] as? [String: String])?["accept-language"] == "de")
        #expect(http["lifetimeSeconds"] as? Double == 600)

        let inspect = try await CourierProcess.run(["cache", "inspect", dir, server.url("/stale")])
        #expect(inspect.status == 0, "\(inspect.stderr)")
        #expect(inspect.stdout.contains("checksums: header and payload intact"))
        // 100 s old on arrival, plus however long the test has run.
        let freshness = try #require(inspect.stdout.split(separator: "\n").first { $0.hasPrefix("freshness: ") })
        #expect(freshness.hasPrefix("freshness: stale, age 10") && freshness.hasSuffix("s of a 60s lifetime"), "\(freshness)")
        #expect(inspect.stdout.contains("response: 200 Scripted"))
        #expect(inspect.stdout.contains("  ETag: \"e\""))
        #expect(inspect.stdout.contains("body: 10 bytes"))
    }

    /// The record files under a cache directory's stripes: their total bytes and the largest one.
    static func recordBytes(_ directory: String) throws -> (total: Int64, largest: Int64) {
        let manager = FileManager.default
        var total: Int64 = 0
        var largest: Int64 = 0
        for stripe in try manager.contentsOfDirectory(atPath: directory) where stripe.count == 2 {
            for name in try manager.contentsOfDirectory(atPath: directory + "/" + stripe) {
                let attributes = try manager.attributesOfItem(atPath: directory + "/" + stripe + "/" + name)
                let size = (attributes[.size] as? NSNumber)?.int64Value ?? 0
                total += size
                largest = max(largest, size)
            }
        }
        return (total, largest)
    }

    /// The URLs of the responses `courier cache ls --json` lists.
    static func listedURLs(_ directory: String) async throws -> Set<String> {
        let list = try await CourierProcess.run(["cache", "ls", "--json", directory])
        #expect(list.status == 0, "\(list.stderr)")
        return Set(try list.stdout.split(separator: "\n").compactMap {
            let object = try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
            return (object["http"] as? [String: Any])?["url"] as? String
        })
    }

    /// Issue 23: a policy's `max-size` bounds the directory as runs of `courier fetch` store into it, each a process
    /// of its own (not only when the next collection runs, minutes later), and what goes is the least recently
    /// used. 21 KB responses under a 100 KiB cap: five do not fit, four do. /2 is fetched again (a hit) before /6
    /// and /7, so it outlives /3 and /4, which were stored after it.
    @Test func aPolicysMaxSizeBoundsTheDirectoryAcrossRunsAndKeepsTheMostRecentlyUsed() async throws {
        let body = String(repeating: "x", count: 21_000)
        let server = try RecordingServer { _, _ in .init(headers: [("Cache-Control", "max-age=300")], body: body) }
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        let policy = try files.write("policy.yaml", FetchTestFiles.cachingPolicy("{ ttl: 5m, max-size: 100KiB }"))
        let dir = files.path("capped")
        let cap: Int64 = 100 * 1024
        var largest: Int64 = 0
        for path in ["/0", "/1", "/2", "/3", "/4", "/5", "/2", "/6", "/7"] {
            let run = try await CourierProcess.run(["fetch", "--policy", policy, "--cache-dir", dir, server.url(path)])
            #expect(run.status == 0, "\(run.stderr)")
            let bytes = try Self.recordBytes(dir)
            largest = max(largest, bytes.largest)
            #expect(bytes.total <= cap + largest, "\(bytes.total) bytes of records after \(path)")
        }
        #expect(server.requests.count == 8)  // the second /2 was a hit
        let kept = try await Self.listedURLs(dir)
        for path in ["/2", "/5", "/6", "/7"] { #expect(kept.contains(server.url(path)), "\(path) was evicted: \(kept.sorted())") }
        for path in ["/0", "/1", "/3", "/4"] { #expect(!kept.contains(server.url(path)), "\(path) was kept: \(kept.sorted())") }
    }

    /// `courier cache ls` lists stored responses, one line each; the per-URL `Vary` indexes the HTTP cache files
    /// beside them are internal records, listed only with `--internal`.
    @Test func cacheListShowsOneLinePerStoredResponseAndTheIndexesOnlyWhenAsked() async throws {
        let server = try RecordingServer { _, request in
            request.path == "/varied"
                ? .init(headers: [("Cache-Control", "max-age=600"), ("Vary", "Accept-Language")], body: "varied")
                : .init(headers: [("Cache-Control", "max-age=600")], body: "plain")
        }
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        let dir = files.path("internal")
        let fetched = try await CourierProcess.run(["fetch", "--cache-dir", dir, server.url("/varied"), server.url("/plain")])
        #expect(fetched.status == 0, "\(fetched.stderr)")

        let text = try await CourierProcess.run(["cache", "ls", dir])
        #expect(text.status == 0, "\(text.stderr)")
        // The header row, then one line per stored response.
        let lines = text.stdout.split(separator: "\n").dropFirst().map(String.init)
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.allSatisfy { $0.hasPrefix("GET ") }, "\(lines)")
        let json = try await CourierProcess.run(["cache", "ls", "--json", dir])
        let objects = try json.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(objects.count == 2 && objects.allSatisfy { $0["http"] != nil }, "\(json.stdout)")

        let withInternal = try await CourierProcess.run(["cache", "ls", "--internal", dir])
        #expect(withInternal.status == 0, "\(withInternal.stderr)")
        let all = withInternal.stdout.split(separator: "\n").dropFirst().map(String.init)
        #expect(all.count == 4, "\(all)")
        #expect(all.filter { $0.hasPrefix("vary GET \(server.url("/"))") }.count == 2, "\(all)")
        let internalJSON = try await CourierProcess.run(["cache", "ls", "--internal", "--json", dir])
        #expect(internalJSON.stdout.split(separator: "\n").count == 4)
    }
}
