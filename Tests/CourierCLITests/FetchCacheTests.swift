import CourierCore
import CourierTestSupport
import Foundation
import Testing

/// `courier fetch --cache-dir` and `--offline`: the HTTP cache through the command, against a loopback server.
@Suite(.timeLimit(.minutes(1)), .onBlockingThreads) struct FetchCacheTests {
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
        let report = try #require(try FetchTestFiles.reports(second.stderr).first)
        #expect(report["cache"] as? String == "hit")
        #expect(report["bytesReceived"] as? Int == 0)
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
        let policy = try files.write("policy.yaml", """
            version: 1
            services:
              cached:
                hosts: [127.0.0.1]
                scheme: http
                cache: { ttl: 1m }
            """)
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
}
