import CourierCore
import CourierHTTP1
import CourierTestSupport
import CourierTransport
import Synchronization
import Testing

/// ``ExchangeObserver``: what `courier fetch -v` prints comes from here, so it must see every hop as it went over
/// the wire, in order.
@Suite(.timeLimit(.minutes(1))) struct ExchangeObserverTests {
    final class Recorder: ExchangeObserver {
        let events = Mutex<[String]>([])
        func connection(_ connection: ExchangeConnection) {
            events.withLock {
                $0.append("connection \(connection.host):\(connection.port) \(connection.address ?? "?") reused=\(connection.reused) tls=\(connection.tls != nil)")
            }
        }
        func sent(head: [UInt8]) { events.withLock { $0.append("sent " + String(decoding: head, as: UTF8.self)) } }
        func received(head: HTTPResponseHead) { events.withLock { $0.append("received \(head.version) \(head.status)") } }
    }

    @Test func everyHopsConnectionAndHeadsInOrder() async throws {
        let server = try RecordingServer { _, request in
            request.path == "/start" ? RecordingServer.Reply(status: 302, headers: [("Location", "/end")], body: "") : RecordingServer.Reply()
        }
        defer { server.stop() }
        let recorder = Recorder()
        var configuration = HTTPClientConfiguration()
        configuration.userAgent = "observed/1"
        configuration.exchangeObserver = recorder
        let client = HTTPClient(configuration: configuration)
        defer { client.shutdown() }
        let response = try await client.execute(HTTPRequest(url: HTTPURL(server.url("/start"))!, decompress: false))
        #expect(response.status == 200)
        let host = "127.0.0.1:\(server.port)"
        let events = recorder.events.withLock { $0 }
        #expect(events == [
            "connection 127.0.0.1:\(server.port) \(host) reused=false tls=false",
            "sent GET /start HTTP/1.1\r\nHost: \(host)\r\nUser-Agent: observed/1\r\n\r\n",
            "received HTTP/1.1 302",
            "connection 127.0.0.1:\(server.port) \(host) reused=true tls=false",
            "sent GET /end HTTP/1.1\r\nHost: \(host)\r\nUser-Agent: observed/1\r\n\r\n",
            "received HTTP/1.1 200",
        ], "\(events)")
    }
}
