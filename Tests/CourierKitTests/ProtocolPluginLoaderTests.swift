import CourierCore
import CourierCrypto
import CourierKit
import Foundation
import Synchronization
import Testing

/// Protocol plugins under the data loader: a scheme of the test's own (`memo:`) loaded through a policy, with the
/// policy's retries and cache; `data:` on by default and `file:` not; a plugin's errors and deadline; a plugin that
/// claims http; and a 5 MB file streamed from disk through the loader.
@Suite(.timeLimit(.minutes(1))) struct ProtocolPluginLoaderTests {
    /// `memo:`: answers `503` the first `failures` times, then `200` with `note <n>`, cacheable for a minute.
    final class MemoPlugin: ProtocolPlugin {
        let failures: Int
        let schemes: [String]
        let calls = Mutex(0)
        let seen = Mutex<[ProtocolRequest]>([])
        init(failures: Int = 0, schemes: [String] = ["memo"]) {
            self.failures = failures
            self.schemes = schemes
        }
        var count: Int { calls.withLock { $0 } }

        func respond(to request: ProtocolRequest) async throws -> ProtocolResponse {
            let n = calls.withLock { count in
                count += 1
                return count
            }
            seen.withLock { $0.append(request) }
            guard n > failures else { return ProtocolResponse(status: 503, reason: "Busy", headers: ["Content-Length": "0"]) }
            let body = Array("note \(n) for \(request.url.path)".utf8)
            return ProtocolResponse(
                status: 200, reason: "OK",
                headers: ["Cache-Control": "max-age=60", "Content-Length": String(body.count), "Content-Type": "text/plain"],
                body: .bytes(body)
            )
        }
    }

    /// Throws `error`, or (nil) never answers.
    struct FailingPlugin: ProtocolPlugin {
        let error: (any Error & Sendable)?
        var hangsInBody = false
        var schemes: [String] { ["broken"] }
        func respond(to request: ProtocolRequest) async throws -> ProtocolResponse {
            if hangsInBody {
                return ProtocolResponse(status: 200, body: ProtocolBody(next: {
                    try await Task.sleep(for: .seconds(3600))
                    return nil
                }))
            }
            if let error { throw error }
            try await Task.sleep(for: .seconds(3600))
            return ProtocolResponse(status: 200)
        }
    }

    struct PluginFailure: Error, CustomStringConvertible {
        var description: String { "the memo store is closed" }
    }

    static let notesPolicy = """
        version: 1
        services:
          notes:
            hosts: [notes]
            scheme: http
            retry: { max-attempts: 3, on: [503], backoff: { initial: 1ms, max: 1ms } }
            cache: { ttl: 5m, max-size: 10MB }
        """

    @Test func aCustomSchemeLoadsThroughThePolicyWithItsRetriesAndItsCache() async throws {
        let directory = NSTemporaryDirectory() + "courier-memo-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let memo = MemoPlugin(failures: 2)
        let service = DataLoaderService(graph: try compile(Self.notesPolicy), configuration: .testing {
            $0.protocols = ProtocolRegistry.standard.registering(memo)
            $0.cacheDirectory = directory
        })
        let loader = service.makeFactory().makeLoader()
        let first = try await loader.load(Request(url: "memo://notes/v1/7"))
        #expect(first.status == 200)
        #expect(first.attempts == 3, "503 twice, retried by the policy, then 200")
        #expect(String(decoding: first.body, as: UTF8.self) == "note 3 for /v1/7")
        #expect(first.url.description == "memo://notes/v1/7")
        #expect(first.cache == .miss)
        #expect(memo.count == 3)
        #expect(memo.seen.withLock { $0.last?.headers["user-agent"] } == "courier-tests/1")

        let second = try await loader.load(Request(url: "memo://notes/v1/7"))
        #expect(second.cache == .hit)
        #expect(second.body == first.body)
        #expect(memo.count == 3, "the cache answered: the plugin was not asked again")
    }

    @Test func dataIsOnByDefaultFileIsNotAndAnUnclaimedSchemeIsRefused() async throws {
        let service = DataLoaderService(graph: try compile("version: 1\n"), configuration: .testing())
        let loader = service.makeFactory().makeLoader()
        let data = try await loader.load(Request(url: "data:text/plain;base64,SGVsbG8="))
        #expect(data.status == 200)
        #expect(data.body == Array("Hello".utf8))
        #expect(data.headers["content-type"] == "text/plain")
        for url in ["file:///etc/hosts", "memo://notes/1", "gopher://example.com/"] {
            do {
                _ = try await loader.load(Request(url: url))
                Issue.record("\(url) was answered")
            } catch {
                #expect(error.kind == .policy, "\(url): \(error)")
                #expect(error.attempts == 0)
            }
        }
        do {
            _ = try await loader.load(Request(url: "data:;base64,%%%"))
            Issue.record("bad data: answered")
        } catch {
            #expect(error.kind == .protocolPlugin, "\(error)")
            #expect(error.message.contains("'%'"), "\(error)")
        }
    }

    @Test func aPluginsErrorsAreTypedAndItsDeadlineIsTheLoads() async throws {
        func service(_ plugin: FailingPlugin) throws -> DataLoaderService {
            DataLoaderService(graph: try compile("""
                version: 1
                defaults:
                  retry: { max-attempts: 2, backoff: { initial: 1ms, max: 1ms } }
                """), configuration: .testing { $0.protocols = ProtocolRegistry([plugin]) })
        }
        let plain = try service(FailingPlugin(error: PluginFailure())).makeFactory().makeLoader()
        do {
            _ = try await plain.load(Request(url: "broken://x/"))
            Issue.record("answered")
        } catch {
            #expect(error.kind == .protocolPlugin)
            #expect(error.message.contains("the memo store is closed"), "\(error)")
            #expect(error.attempts == 1, "no retry condition covers a plugin's own failure")
        }
        // A CourierError keeps its kind, and so its retry condition: a plugin can fail as a network would.
        let network = try service(FailingPlugin(error: CourierError(.connect, "refused"))).makeFactory().makeLoader()
        do {
            _ = try await network.load(Request(url: "broken://x/"))
            Issue.record("answered")
        } catch {
            #expect(error.kind == .connect, "\(error)")
            #expect(error.attempts == 2, "retried as a connect-error")
        }
        for plugin in [FailingPlugin(error: nil), FailingPlugin(error: nil, hangsInBody: true)] {
            let hung = try service(plugin).makeFactory().makeLoader()
            let started = ContinuousClock.now
            do {
                _ = try await hung.load(Request(url: "broken://x/", timeout: .milliseconds(300)))
                Issue.record("answered")
            } catch {
                #expect(error.kind == .timeout, "\(error)")
            }
            #expect(ContinuousClock.now - started < .seconds(30), "the deadline ended the wait, not the plugin")
        }
    }

    @Test func aPluginMayClaimHTTPAndReplaceTheNetwork() async throws {
        let memo = MemoPlugin(schemes: ["http", "https"])
        let service = DataLoaderService(graph: try compile("version: 1\n"), configuration: .testing { $0.protocols = ProtocolRegistry([memo]) })
        let loader = service.makeFactory().makeLoader()
        // Port 1 on a name that does not resolve: only the plugin can answer.
        let response = try await loader.load(Request(url: "https://nowhere.invalid:1/v1/me"))
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "note 1 for /v1/me")
        #expect(memo.count == 1)
    }

    @Test func aFiveMegabyteFileStreamsFromDiskWithTheSameSHA256() async throws {
        let root = NSTemporaryDirectory() + "courier-file-stream-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        // Not a repeating pattern of any chunk's size: a chunk out of place changes the digest.
        let bytes = (0..<(5 << 20)).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 11) }
        try Data(bytes).write(to: URL(filePath: root + "/big.bin"))
        var expected = SHA256()
        expected.update(bytes)

        let service = DataLoaderService(graph: try compile("version: 1\n"), configuration: .testing {
            $0.protocols = ProtocolRegistry.standard.registering(FileProtocol(root: root))
        })
        let loader = service.makeFactory().makeLoader()
        var digest = SHA256()
        var chunks = 0
        var received = 0
        var head: ResponseHead?
        for try await event in loader.stream(Request(url: "file://" + root + "/big.bin")) {
            switch event {
            case .response(let h): head = h
            case .chunk(let chunk):
                digest.update(chunk)
                chunks += 1
                received += chunk.count
            case .retrying, .resuming: Issue.record("retried")
            case .finished: break
            }
        }
        #expect(head?.status == 200)
        #expect(head?.headers["content-length"] == String(5 << 20))
        #expect(received == 5 << 20)
        #expect(chunks >= 5 << 20 / (64 << 10), "read in chunks, not whole: \(chunks)")
        #expect(digest.finalize() == expected.finalize())

        // A range of it through the loader: 206 is the answer.
        let part = try await loader.load(Request(url: "file://" + root + "/big.bin", headers: ["Range": "bytes=-100"]))
        #expect(part.status == 206)
        #expect(part.body == Array(bytes.suffix(100)))
        #expect(part.headers["content-range"] == "bytes \((5 << 20) - 100)-\((5 << 20) - 1)/\(5 << 20)")
    }
}
