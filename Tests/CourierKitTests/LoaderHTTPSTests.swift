import CourierCore
import CourierKit
import CourierTestSupport
import Foundation
import Testing
import CourierTLS
import CourierTransport

/// The data loader over HTTPS, against Python's TLS server with the run's test PKI: the policy's rate limits,
/// retries, fallbacks (SNI and verification kept on the original host), authorisers and streaming, and the TLS
/// settings a service declares.
@Suite(.timeLimit(.minutes(2))) struct LoaderHTTPSTests {
    static let pki = TestPKI.shared

    /// A service over the policy's `services:` block; every service trusts the test root.
    static let trust = #"tls: { ca-file: "\#(pki.rootCA)" }"#

    static func service(_ services: String) throws -> DataLoaderService {
        try makeService("""
            version: 1
            authorisers:
              bearer: { plugin: static-bearer, settings: { token: "tls-token-42" } }
            services:
            \(services)
            """)
    }

    @Test func theRateLimitPacesHTTPSRequests() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions())
        let loader = try Self.service("""
              paced:
                hosts: [127.0.0.1]
                \(Self.trust)
                rate-limit: { requests-per-second: 10, burst: 1 }
            """).makeFactory().makeLoader()
        let seconds = try await elapsed {
            for i in 0..<5 {
                let response = try await loader.load(Request(url: peer.url("/bytes/\(i + 1)")))
                #expect(response.status == 200)
            }
        }
        #expect(seconds >= 0.35, "5 requests at 10/s took \(seconds) s")
    }

    @Test func retriesGoOverTLSAndReuseTheConnection() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions())
        let loader = try Self.service("""
              flaky:
                hosts: [127.0.0.1]
                \(Self.trust)
                retry: { max-attempts: 3, on: [503], backoff: { initial: 10ms, jitter: none } }
            """).makeFactory().makeLoader()
        let response = try await loader.load(Request(url: peer.url("/status/503")))
        #expect(response.status == 503)
        #expect(response.attempts == 3)
        #expect(response.timeline.tlsSession?.version == "TLSv1.3")
        let count = try await loader.load(Request(url: peer.url("/connections")))
        #expect(String(decoding: count.body, as: UTF8.self) == #"{"accepted": 1}"#)
    }

    @Test func aFallbackAddressKeepsSNIAndVerificationOnTheOriginalHost() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions())
        let dead = try ClosedPort()
        let loader = try Self.service("""
              api:
                hosts: [localhost]
                \(Self.trust)
                retry: { max-attempts: 1 }
                fallbacks: { localhost: ["127.0.0.1:\(peer.port)"] }
            """).makeFactory().makeLoader()
        let response = try await loader.load(Request(url: "https://localhost:\(dead.port)/sni"))
        #expect(response.status == 200)
        #expect(response.addressesTried == ["localhost:\(dead.port)", "127.0.0.1:\(peer.port)"])
        #expect(String(decoding: response.body, as: UTF8.self) == "localhost")
    }

    @Test func anAuthoriserSendsItsTokenOverTLSAndNotAfterADowngradeRedirect() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions())
        let plain = try await PythonPeer.start()
        let loader = try Self.service("""
              api:
                hosts: [127.0.0.1]
                \(Self.trust)
                authoriser: bearer
                retry: { max-attempts: 1 }
            """).makeFactory().makeLoader()
        let echo = try await loader.load(Request(url: peer.url("/echo")))
        #expect(String(decoding: echo.body, as: UTF8.self).contains("Bearer tls-token-42"))
        // https -> http on the same host: the route's authoriser refuses to go on in clear text, so the hop is
        // never sent (a transport-level redirect drops the credentials instead; see the next test).
        let target = plain.url("/echo").addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let error = await #expect(throws: CourierError.self) {
            try await loader.load(Request(url: peer.url("/redirect-to?status=302&location=\(target)")))
        }
        #expect(error?.kind == .policy)
        let plainCount = try await HTTPClient().execute(HTTPRequest(url: #require(HTTPURL(plain.url("/connections")))))
        #expect(String(decoding: plainCount.body, as: UTF8.self) == #"{"accepted": 1}"#, "only this count reached it")
    }

    @Test func aTransportRedirectFromHTTPSToHTTPDropsTheCredentials() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions())
        let plain = try await PythonPeer.start()
        let client = HTTPClient()
        defer { client.shutdown() }
        var headers = HTTPHeaders()
        headers.add(name: "Authorization", value: "Bearer tls-token-42")
        let target = plain.url("/echo").addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let url = try #require(HTTPURL(peer.url("/redirect-to?status=302&location=\(target)")))
        let response = try await client.execute(HTTPRequest(url: url, headers: headers, tls: TLSPolicy(caFile: Self.pki.rootCA)))
        #expect(response.status == 200)
        #expect(response.metrics.redirects == 1)
        #expect(!String(decoding: response.body, as: UTF8.self).contains("tls-token-42"))
    }

    @Test func aStreamOverTLSDeliversTheWholeBody() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions())
        let loader = try Self.service("""
              media:
                \(Self.trust)
                hosts: [127.0.0.1]
            """).makeFactory().makeLoader()
        var body: [UInt8] = []
        var finished: Response?
        for try await event in loader.stream(Request(url: peer.url("/chunked/300000?size=7000"))) {
            switch event {
            case .chunk(let bytes): body += bytes
            case .finished(let response): finished = response
            default: break
            }
        }
        #expect(body == (0..<300_000).map { UInt8($0 % 251) })
        #expect(finished?.status == 200)
    }

    @Test func aServicesPinsRefuseAServerWhoseChainDoesNotMatch() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions())
        let loader = try Self.service("""
              pinned:
                hosts: [127.0.0.1]
                retry: { max-attempts: 3, on: [connect-error] }
                tls: { pins: ["\(Self.pki.pins["backup"]!)", "\(Self.pki.pins["untrusted"]!)"], ca-file: "\(Self.pki.rootCA)" }
            """).makeFactory().makeLoader()
        let error = await #expect(throws: CourierError.self) { try await loader.load(Request(url: peer.url("/"))) }
        #expect(error?.kind == .tlsPin)
        #expect(error?.attempts == 1, "a pin mismatch is not retried")
    }

    @Test func aRedirectIsRoutedAgainSoItsTargetGetsItsOwnServicesPins() async throws {
        let peer = try await PythonPeer.start(tls: TLSPeerOptions())
        let loader = try Self.service("""
              open:
                hosts: [127.0.0.1]
                \(Self.trust)
                retry: { max-attempts: 1 }
              pinned:
                hosts: [localhost]
                retry: { max-attempts: 1 }
                tls: { pins: ["\(Self.pki.pins["backup"]!)", "\(Self.pki.pins["untrusted"]!)"], ca-file: "\(Self.pki.rootCA)" }
            """).makeFactory().makeLoader()
        let target = peer.localhostURL("/bytes/3").addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let direct = try await loader.load(Request(url: peer.url("/bytes/3")))
        #expect(direct.status == 200)
        // The first hop (127.0.0.1, unpinned) answers 302 to localhost, which the pinned service claims.
        let error = await #expect(throws: CourierError.self) {
            try await loader.load(Request(url: peer.url("/redirect-to?status=302&location=\(target)")))
        }
        #expect(error?.kind == .tlsPin, "\(String(describing: error))")
    }
}
