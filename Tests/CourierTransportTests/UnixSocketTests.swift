import CourierCore
import CourierTestSupport
import CourierTLS
import Foundation
import Testing

@testable import CourierTransport

/// HTTP over Unix domain sockets against Python's own `http.server` listening on a socket path in a temporary
/// folder: both ways of naming the socket, the `Host` field each sends, pooling per path, and the failures (no
/// such path, a server that closes in the middle of a response).
@Suite(.timeLimit(.minutes(1)))
struct UnixSocketTests {
    /// A fresh temporary folder (short: a socket path holds at most 107 bytes), removed when the test ends.
    final class Folder {
        let path: String
        init() throws {
            path = "/tmp/courier-unix-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        }
        deinit { try? FileManager.default.removeItem(atPath: path) }
        var socket: String { path + "/peer.sock" }
        /// The socket path as `http+unix://` writes it: percent-encoded.
        var encodedSocket: String { socket.replacingOccurrences(of: "/", with: "%2F") }
    }

    static let timeouts = TimeoutPolicy(connect: .seconds(5), idle: .seconds(5), total: .seconds(10))

    static func headers(_ body: [UInt8]) throws -> [String: String] {
        let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
        let pairs = object?["headers"] as? [[String]] ?? []
        return Dictionary(pairs.map { ($0[0].lowercased(), $0[1]) }, uniquingKeysWith: { a, _ in a })
    }

    @Test func anHTTPUnixURLReachesTheSocketAndSaysHostLocalhost() async throws {
        let folder = try Folder()
        let peer = try await PythonPeer.start(unixSocket: folder.socket)
        defer { peer.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        var request = try #require(HTTPRequest(unixSocketURL: "http+unix://\(folder.encodedSocket)/echo?x=1"))
        request.timeouts = Self.timeouts
        #expect(request.url.description == "http://localhost/echo?x=1")
        #expect(request.unixSocketPath == folder.socket)
        let response = try await client.execute(request)
        #expect(response.status == 200)
        #expect(try Self.headers(response.body)["host"] == "localhost")
    }

    @Test func aURLWithASocketPathKeepsItsHostForTheHostField() async throws {
        let folder = try Folder()
        let peer = try await PythonPeer.start(unixSocket: folder.socket)
        defer { peer.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        var request = HTTPRequest(url: HTTPURL("http://docker.example:2375/echo")!, timeouts: Self.timeouts)
        request.unixSocketPath = folder.socket
        let response = try await client.execute(request)
        #expect(try Self.headers(response.body)["host"] == "docker.example:2375")
    }

    @Test func connectionsArePooledPerSocketPath() async throws {
        let one = try Folder(), two = try Folder()
        let first = try await PythonPeer.start(unixSocket: one.socket)
        let second = try await PythonPeer.start(unixSocket: two.socket)
        defer { first.stop(); second.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        func get(_ folder: Folder, _ path: String) async throws -> HTTPResponse {
            var request = HTTPRequest(url: HTTPURL("http://localhost\(path)")!, timeouts: Self.timeouts)
            request.unixSocketPath = folder.socket
            return try await client.execute(request)
        }
        for i in 0..<3 {
            let response = try await get(one, "/bytes/\(10 + i)")
            #expect(response.body.count == 10 + i)
            #expect(response.metrics.reusedConnection == (i > 0))
        }
        // The same origin through another socket is another server: a connection of its own.
        let other = try await get(two, "/bytes/5")
        #expect(other.metrics.reusedConnection == false)
        #expect(String(decoding: try await get(one, "/connections").body, as: UTF8.self) == #"{"accepted": 1}"#)
        #expect(String(decoding: try await get(two, "/connections").body, as: UTF8.self) == #"{"accepted": 1}"#)
    }

    @Test func aPathThatDoesNotExistIsAConnectErrorNamingIt() async throws {
        let folder = try Folder()
        let client = HTTPClient()
        defer { client.shutdown() }
        var request = HTTPRequest(url: HTTPURL("http://localhost/")!, timeouts: Self.timeouts)
        request.unixSocketPath = folder.path + "/absent.sock"
        do {
            _ = try await client.execute(request)
            Issue.record("a missing socket answered")
        } catch {
            #expect(error.kind == .connect)
            #expect(error.message == "could not connect to the Unix socket \(folder.path)/absent.sock: No such file or directory")
            #expect(error.targetUnreachable)
        }
    }

    @Test func aPathTooLongForASocketIsAConnectErrorSayingSo() async throws {
        let client = HTTPClient()
        defer { client.shutdown() }
        var request = HTTPRequest(url: HTTPURL("http://localhost/")!, timeouts: Self.timeouts)
        request.unixSocketPath = "/tmp/" + String(repeating: "x", count: 200)
        do {
            _ = try await client.execute(request)
            Issue.record("an impossible socket path answered")
        } catch {
            #expect(error.kind == .connect)
            #expect(error.message.hasSuffix("(a socket path is at most 107 bytes)"))
        }
    }

    @Test func aServerThatClosesMidResponseIsAProtocolError() async throws {
        let folder = try Folder()
        let peer = try await PythonPeer.start(unixSocket: folder.socket)
        defer { peer.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        var request = HTTPRequest(url: HTTPURL("http://localhost/cut/4000")!, timeouts: Self.timeouts)
        request.unixSocketPath = folder.socket
        do {
            let response = try await client.execute(request)
            Issue.record("a cut body was complete: \(response.body.count) bytes")
        } catch {
            #expect(error.kind == .protocol)
            #expect(error.message == "the server broke HTTP/1.1 framing")
            #expect("\(error)".contains("connection closed with 2000 body bytes missing"))
            // The head and half the body arrived before the close.
            #expect(error.bytesReceived > 2000)
        }
    }

    @Test func httpsPlusUnixRunsTLSOverTheSocketVerifyingTheURLsHostWithAClientCertificate() async throws {
        let folder = try Folder()
        let pki = TestPKI.shared
        let server = try await PythonPeer.start(unixSocket: folder.socket, tls: TLSPeerOptions(clientCA: pki.clientRootCA))
        defer { server.stop() }
        let client = HTTPClient()
        defer { client.shutdown() }
        var request = try #require(HTTPRequest(unixSocketURL: "https+unix://\(folder.encodedSocket)/client-cert"))
        request.timeouts = Self.timeouts
        request.tls = MutualTLSTests.identity("client")
        let response = try await client.execute(request)
        #expect(String(decoding: response.body, as: UTF8.self) == "Courier Test Client")
        // The certificate was verified for the URL's host, localhost (the test chain names it).
        #expect(response.metrics.tlsSession?.peerCertificate?.names.contains("localhost") == true)
        // Without the test root the same socket is refused: verification is on.
        var untrusted = try #require(HTTPRequest(unixSocketURL: "https+unix://\(folder.encodedSocket)/client-cert"))
        untrusted.timeouts = Self.timeouts
        do {
            _ = try await client.execute(untrusted)
            Issue.record("an untrusted server was accepted over a Unix socket")
        } catch {
            #expect(error.kind == .tlsCertificate)
        }
    }

    @Test func httpUnixURLsAreReadAsAsyncHTTPClientWritesThem() throws {
        let parsed = try #require(UnixSocketURL.parse("http+unix://%2Frun%2Fdocker.sock/v1.43/info"))
        #expect(parsed.socketPath == "/run/docker.sock")
        #expect(parsed.url.description == "http://localhost/v1.43/info")
        let secure = try #require(UnixSocketURL.parse("HTTPS+UNIX://%2Ftmp%2Fa%20b.sock"))
        #expect(secure.socketPath == "/tmp/a b.sock")
        #expect(secure.url.description == "https://localhost/")
        #expect(UnixSocketURL.parse("http://localhost/") == nil)
        #expect(UnixSocketURL.parse("http+unix:///path") == nil)
        #expect(UnixSocketURL.parse("http+unix://%2Fx%ZZ/") == nil)
        #expect(UnixSocketURL.parse("http+unix://%2Fx%00/") == nil)
    }
}
