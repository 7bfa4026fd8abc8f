import CourierCore
import CourierPosix
import CourierTestSupport
import CourierTLS
import Foundation
import Testing

@testable import CourierTransport

/// A thousand TLS requests (kept-alive, new and resumed connections, failing handshakes) leave no TLS session
/// and no descriptor behind. Run the same test under LeakSanitizer to check OpenSSL's own allocations
/// (docs/tls.md): `swift test --sanitize=address --filter TLSSoakTests`.
@Suite(.timeLimit(.minutes(3)), .onThreadsOfTheirOwn) struct TLSSoakTests {
    @Test func aThousandTLSRequestsLeaveNothingBehind() async throws {
        let pki = TestPKI.shared
        let good = try await PythonPeer.start(tls: TLSPeerOptions())
        let expired = try await PythonPeer.start(tls: TLSPeerOptions(chain: "expired"))
        defer {
            good.stop()
            expired.stop()
        }
        // The shared event loops start (with their epoll and wake-up descriptors) on first use: warm them first.
        let warmUp = HTTPClient()
        _ = try await warmUp.execute(HTTPRequest(url: try #require(HTTPURL(good.url("/bytes/1"))), tls: TLSPolicy(caFile: pki.rootCA)))
        warmUp.shutdown()
        try await Task.sleep(for: .milliseconds(50))
        // Sockets, pipes and event descriptors (other suites' record stores open and close lock files meanwhile);
        // files the TLS code could leave open, the PKI's, are checked by path below.
        let before = try OpenFileDescriptors.countNotOnDisk()
        let beforeList = Set((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [])
        let client = HTTPClient()
        let trusted = TLSPolicy(caFile: pki.rootCA)
        var pinned = trusted
        pinned.pins = [try #require(TLSPolicy.Pin(pki.pins["backup"]!))]
        var outcomes: [String: Int] = [:]
        for i in 0..<1000 {
            let (url, tls): (String, TLSPolicy) = switch i % 10 {
            case 0, 1: (good.url("/close"), trusted)  // a new connection, resumed from the last one's ticket
            case 2: (expired.url("/"), trusted)  // a failing handshake
            case 3: (good.url("/bytes/10"), pinned)  // a pin mismatch after a good handshake
            default: (good.url("/bytes/100"), trusted)  // kept alive
            }
            let request = HTTPRequest(url: try #require(HTTPURL(url)), tls: tls)
            do throws(CourierError) {
                let response = try await client.execute(request)
                outcomes["\(response.status) \(response.metrics.tlsSession?.resumed == true ? "resumed" : "")", default: 0] += 1
            } catch {
                outcomes[error.kind.rawValue, default: 0] += 1
            }
        }
        #expect(outcomes["tls-certificate"] == 100)
        #expect(outcomes["tls-pin"] == 100)
        #expect((outcomes["200 resumed"] ?? 0) >= 150, "\(outcomes)")
        #expect(outcomes.values.reduce(0, +) == 1000)
        client.shutdown()
        let streams = client.pool.connector.liveTLSStreams
        var settled = false
        for _ in 0..<1000 where !settled {  // up to 10 s: other suites' sockets come and go meanwhile
            let descriptors = try OpenFileDescriptors.countNotOnDisk()
            settled = streams.current == 0 && descriptors <= before
            if !settled { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(streams.current == 0, "TLS streams still alive")
        let left = Set((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).subtracting(beforeList)
            .map { ($0, (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) ?? "?") }
        #expect(try OpenFileDescriptors.countNotOnDisk() <= before, "left open: \(left)")
        let pkiDirectory = URL(fileURLWithPath: pki.rootCA).deletingLastPathComponent().path
        #expect(!left.contains { $0.1.hasPrefix(pkiDirectory) }, "certificate files left open: \(left)")
    }
}
