import CourierCore
import Testing

@testable import CourierTransport

/// The CONNECT and SOCKS5 handshakes as protocol traces: bytes out, bytes in, each step.
struct HTTPConnectHandshakeTests {
    static let proxy = ProxyServer(scheme: .http, host: "proxy", port: 3128, username: "alice", password: "s3cret")

    @Test func theRequestNamesTheHostAsWrittenAndCarriesTheProxysCredentialsOnly() {
        let handshake = HTTPConnectHandshake(host: "api.example.com", port: 443, proxy: Self.proxy)
        let text = String(decoding: handshake.request, as: UTF8.self)
        #expect(text == "CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\nProxy-Authorization: Basic YWxpY2U6czNjcmV0\r\n\r\n")
        let anonymous = HTTPConnectHandshake(host: "::1", port: 8443, proxy: ProxyServer(scheme: .http, host: "proxy"))
        #expect(String(decoding: anonymous.request, as: UTF8.self) == "CONNECT [::1]:8443 HTTP/1.1\r\nHost: [::1]:8443\r\n\r\n")
    }

    @Test func aTwoHundredInPiecesOpensTheTunnel() {
        var handshake = HTTPConnectHandshake(host: "h", port: 443, proxy: Self.proxy)
        #expect(handshake.received(Array("HTTP/1.1 200 Connection est".utf8)) == .needMore)
        #expect(handshake.received(Array("ablished\r\nVia: 1.1 squid\r\n".utf8)) == .needMore)
        #expect(handshake.received(Array("\r\n".utf8)) == .established(leftover: []))
    }

    @Test func fourOhSevenSaysWhichSchemeTheProxyAskedFor() {
        var handshake = HTTPConnectHandshake(host: "h", port: 443, proxy: Self.proxy)
        let answer = "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"corp\"\r\nContent-Length: 5\r\n\r\ndenied"
        #expect(handshake.received(Array(answer.utf8)) == .failed(.authenticationRequired(scheme: "Basic", hadCredentials: true)))
    }

    @Test func anotherStatusIsARefusalWithThatStatus() {
        var handshake = HTTPConnectHandshake(host: "h", port: 443, proxy: Self.proxy)
        #expect(handshake.received(Array("HTTP/1.1 403 Forbidden\r\n\r\n".utf8)) == .failed(.tunnelRefused(status: 403, reason: "Forbidden")))
    }

    @Test func garbageAndEarlyCloseAreBadAnswers() {
        var handshake = HTTPConnectHandshake(host: "h", port: 443, proxy: Self.proxy)
        guard case .failed(.badAnswer) = handshake.received(Array("SSH-2.0-OpenSSH\r\n\r\n".utf8)) else {
            Issue.record("a non-HTTP answer was accepted")
            return
        }
        let fresh = HTTPConnectHandshake(host: "h", port: 443, proxy: Self.proxy)
        #expect(fresh.receivedEnd() == .failed(.badAnswer("it closed the connection without answering")))
    }

    @Test func theErrorNamesTheProxyWithoutItsPassword() {
        let error = ProxyError(proxy: Self.proxy.description, target: "h:443", reason: .authenticationRequired(scheme: "Basic", hadCredentials: true))
        #expect(error.description.contains("http://alice@proxy:3128"))
        #expect(!error.description.contains("s3cret"))
        #expect(error.kind == .proxyTunnel)
    }
}

struct SOCKS5HandshakeTests {
    @Test func withoutCredentialsTheGreetingOffersNoAuthenticationAndTheRequestNamesTheAddress() {
        var handshake = SOCKS5Handshake(target: .address([127, 0, 0, 1]), port: 8080, username: nil, password: nil)
        #expect(handshake.greeting == [5, 1, 0])
        #expect(handshake.received([5, 0]) == .send([5, 1, 0, 1, 127, 0, 0, 1, 0x1F, 0x90]))
        #expect(handshake.received([5, 0, 0, 1, 10, 0, 0]) == .needMore)
        #expect(handshake.received([1, 0x12, 0x34]) == .established(leftover: []))
    }

    @Test func withCredentialsItAuthenticatesAsRFC1929SaysThenNamesTheHostForTheProxyToResolve() {
        var handshake = SOCKS5Handshake(target: .name("example.com"), port: 443, username: "u", password: "pw")
        #expect(handshake.greeting == [5, 2, 0, 2])
        #expect(handshake.received([5, 2]) == .send([1, 1, UInt8(ascii: "u"), 2, UInt8(ascii: "p"), UInt8(ascii: "w")]))
        #expect(handshake.received([1, 0]) == .send([5, 1, 0, 3, 11] + Array("example.com".utf8) + [1, 0xBB]))
        #expect(handshake.received([5, 0, 0, 3, 3] + Array("abc".utf8) + [0, 80]) == .established(leftover: []))
    }

    @Test func refusalsAreNamed() {
        var refused = SOCKS5Handshake(target: .address([10, 0, 0, 1]), port: 1, username: nil, password: nil)
        _ = refused.received([5, 0])
        #expect(refused.received([5, 5, 0, 1, 0, 0, 0, 0, 0, 0]) == .failed(.socksRefused(code: 5)))
        #expect(SOCKS5Handshake.replyName(5) == "connection refused")
        var badPassword = SOCKS5Handshake(target: .address([10, 0, 0, 1]), port: 1, username: "u", password: "x")
        _ = badPassword.received([5, 2])
        #expect(badPassword.received([1, 1]) == .failed(.socksAuthentication("refused the username and password (status 1)")))
        var noMethod = SOCKS5Handshake(target: .address([10, 0, 0, 1]), port: 1, username: nil, password: nil)
        guard case .failed(.socksAuthentication) = noMethod.received([5, 0xFF]) else {
            Issue.record("no acceptable method was not an authentication failure")
            return
        }
        var notSOCKS = SOCKS5Handshake(target: .address([10, 0, 0, 1]), port: 1, username: nil, password: nil)
        guard case .failed(.badAnswer) = notSOCKS.received(Array("HTTP/1.1 400".utf8)) else {
            Issue.record("an HTTP answer was taken for SOCKS5")
            return
        }
    }

    @Test func anIPv6TargetIsSentAsSixteenBytes() {
        let target = SOCKS5Handshake.Target(ipAddress: "::1")
        #expect(target == .address(Array(repeating: 0, count: 15) + [1]))
        #expect(SOCKS5Handshake.Target(ipAddress: "localhost") == nil)
    }
}
