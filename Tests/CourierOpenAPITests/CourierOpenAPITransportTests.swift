import CourierCore
import CourierKit
import CourierOpenAPI
import CourierTestSupport
import Foundation
import HTTPTypes
@_spi(Generated) import OpenAPIRuntime
import Testing

/// `CourierOpenAPITransport` against loopback servers: what a generated client hands it arrives intact, bodies stream
/// both ways, the policy's retries apply, and Courier's error kinds survive the runtime's wrapping.
@Suite struct CourierOpenAPITransportTests {
    static let policy = """
        version: 1
        services:
          api:
            hosts: [127.0.0.1]
            retry:
              max-attempts: 3
              on: [connect-error, 503, connection-lost]
              methods: [GET, PUT]
              backoff: { initial: 10ms, multiplier: 2, jitter: none }
        """

    /// A transport over a loader of a fresh service made from `policy` (the loader keeps its service).
    static func transport(_ policy: String = policy) throws -> CourierOpenAPITransport {
        let path = NSTemporaryDirectory() + "courier-openapi-\(UUID().uuidString).yaml"
        try policy.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        var configuration = DataLoaderService.Configuration(userAgent: "courier-openapi-tests/1")
        configuration.environment = [:]
        let service = try DataLoaderService(policyFile: path, configuration: configuration)
        return CourierOpenAPITransport(loader: service.makeFactory().makeLoader())
    }

    /// Sends `method path` with `body` to the server at `base`, as a generated client's operation would.
    static func send(
        _ transport: CourierOpenAPITransport, _ method: HTTPRequest.Method, _ path: String, body: HTTPBody? = nil, to base: String
    ) async throws -> (HTTPResponse, HTTPBody?) {
        try await transport.send(
            HTTPRequest(method: method, scheme: nil, authority: nil, path: path), body: body, baseURL: URL(string: base)!,
            operationID: "operation"
        )
    }

    static func collect(_ body: HTTPBody?) async throws -> String {
        guard let body else { return "<none>" }
        return try await String(collecting: body, upTo: 1 << 24)
    }

    @Test func methodPathQueryHeadersAndBodyRoundTrip() async throws {
        let server = try RecordingServer { _, _ in
            RecordingServer.Reply(status: 201, reason: "Created", headers: [("Content-Type", "application/json"), ("X-Note-Id", "n-7")], body: #"{"id":"n-7"}"#)
        }
        defer { server.stop() }
        let transport = try Self.transport()
        var request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/notes/a%20b?tag=x%26y&limit=2")
        request.headerFields[.contentType] = "application/json"
        // The runtime sets Content-Length for a body of known length; Courier writes the framing itself.
        request.headerFields[.contentLength] = "16"
        request.headerFields[HTTPField.Name("X-Trace")!] = "abc"
        request.headerFields.append(HTTPField(name: HTTPField.Name("X-Repeat")!, value: "1"))
        request.headerFields.append(HTTPField(name: HTTPField.Name("X-Repeat")!, value: "2"))
        let (response, body) = try await transport.send(
            request, body: HTTPBody(#"{"text":"hello"}"#), baseURL: URL(string: server.url("/v1/"))!, operationID: "createNote"
        )
        #expect(response.status.code == 201)
        #expect(response.status.reasonPhrase == "Created")
        #expect(response.headerFields[HTTPField.Name("X-Note-Id")!] == "n-7")
        #expect(try await Self.collect(body) == #"{"id":"n-7"}"#)

        let received = try #require(server.requests.first)
        #expect(server.requests.count == 1)
        #expect(received.requestLine == "POST /v1/notes/a%20b?tag=x%26y&limit=2 HTTP/1.1")
        #expect(received.header("content-type") == "application/json")
        #expect(received.header("x-trace") == "abc")
        #expect(received.headerLines.filter { $0.lowercased().hasPrefix("x-repeat:") } == ["X-Repeat: 1", "X-Repeat: 2"])
        // A small body of known length goes whole, with one Content-Length.
        #expect(received.headerLines.filter { $0.lowercased().hasPrefix("content-length:") } == ["Content-Length: 16"])
        #expect(received.bodyText == #"{"text":"hello"}"#)
    }

    @Test func aServerURLWithoutAPathTakesTheOperationsPathAsItIs() async throws {
        let server = try RecordingServer()
        defer { server.stop() }
        let transport = try Self.transport()
        let (response, _) = try await Self.send(transport, .get, "/notes?tag=home", to: server.url(""))
        #expect(response.status.code == 200)
        #expect(server.requests.map(\.requestLine) == ["GET /notes?tag=home HTTP/1.1"])
    }

    @Test func aServerURLWithCredentialsIsRefusedWithoutShowingThem() async throws {
        let server = try RecordingServer()
        defer { server.stop() }
        let transport = try Self.transport()
        let base = "http://user:s3cr3t-pass@127.0.0.1:\(server.port)/v1"
        do {
            _ = try await Self.send(transport, .get, "/notes", to: base)
            Issue.record("a URL with credentials in it was sent")
        } catch let error as CourierError {
            #expect(error.kind == .policy)
            #expect(!String(describing: error).contains("s3cr3t"))
        }
        #expect(server.requests.isEmpty)
    }

    @Test func anUploadOfUnknownLengthIsStreamedChunkedAndSentOnce() async throws {
        let server = try RecordingServer { _, request in
            RecordingServer.Reply(status: 503, body: "got \(request.body.count)")
        }
        defer { server.stop() }
        let transport = try Self.transport()
        let chunks = (0..<5).map { n in [UInt8](repeating: UInt8(ascii: "a") + UInt8(n), count: 100_000) }
        let (stream, continuation) = AsyncThrowingStream<ArraySlice<UInt8>, any Error>.makeStream()
        Task {
            for chunk in chunks { continuation.yield(chunk[...]) }
            continuation.finish()
        }
        let upload = HTTPBody(stream, length: .unknown)
        #expect(upload.iterationBehavior == .single)
        let (response, body) = try await Self.send(transport, .put, "/blobs/1", body: upload, to: server.url(""))
        // The route retries PUT on 503, but a body the runtime can read once cannot be sent again: one attempt.
        #expect(response.status.code == 503)
        #expect(try await Self.collect(body) == "got 500000")
        #expect(server.requests.count == 1)
        let received = try #require(server.requests.first)
        #expect(received.header("transfer-encoding")?.lowercased() == "chunked")
        #expect(received.body == chunks.flatMap { $0 })
    }

    @Test func a503ThenA200IsRetriedByThePolicyWithTheBodyEachTime() async throws {
        let server = try RecordingServer { index, _ in
            index == 0 ? RecordingServer.Reply(status: 503, body: "busy") : .json(200, #"{"ok":true}"#)
        }
        defer { server.stop() }
        let transport = try Self.transport()
        let (response, body) = try await Self.send(transport, .put, "/notes/1", body: HTTPBody("edited"), to: server.url(""))
        #expect(response.status.code == 200)
        #expect(try await Self.collect(body) == #"{"ok":true}"#)
        #expect(server.requests.map(\.requestLine) == ["PUT /notes/1 HTTP/1.1", "PUT /notes/1 HTTP/1.1"])
        #expect(server.requests.map(\.bodyText) == ["edited", "edited"])
    }

    @Test func aStatusTheRetriesDoNotCureIsReturnedForTheClientsUndocumentedCase() async throws {
        let server = try RecordingServer { _, _ in RecordingServer.Reply(status: 503, reason: "Busy", body: "still busy") }
        defer { server.stop() }
        let transport = try Self.transport()
        let (response, body) = try await Self.send(transport, .get, "/status", to: server.url(""))
        #expect(response.status.code == 503)
        #expect(try await Self.collect(body) == "still busy")
        #expect(server.requests.count == 3)
    }

    @Test func aLargeResponseBodyArrivesInChunksAsTheClientReadsIt() async throws {
        let text = String(repeating: "0123456789abcdef", count: 65_536)
        let server = try RecordingServer { _, _ in RecordingServer.Reply(body: text) }
        defer { server.stop() }
        let transport = try Self.transport()
        let (response, body) = try await Self.send(transport, .get, "/big", to: server.url(""))
        let received = try #require(body)
        #expect(response.status.code == 200)
        #expect(received.length == .known(Int64(text.utf8.count)))
        var chunks = 0
        var bytes: [UInt8] = []
        for try await chunk in received {
            chunks += 1
            bytes += chunk
        }
        #expect(chunks > 1)
        #expect(bytes == Array(text.utf8))
    }

    @Test func aHeadRequestHasNoBody() async throws {
        let server = try RecordingServer { _, _ in RecordingServer.Reply(headers: [("X-Size", "12")], body: "") }
        defer { server.stop() }
        let transport = try Self.transport()
        let (response, body) = try await Self.send(transport, .head, "/notes", to: server.url(""))
        #expect(response.status.code == 200)
        #expect(response.headerFields[HTTPField.Name("X-Size")!] == "12")
        #expect(body == nil)
    }

    @Test func aConnectFailureKeepsItsKindThroughTheRuntimesClientError() async throws {
        let closed = try ClosedPort()
        let transport = try Self.transport()
        let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/notes")
        let baseURL = URL(string: "http://127.0.0.1:\(closed.port)")!
        // What the transport throws is the load's CourierError, after the route's three attempts.
        do {
            _ = try await transport.send(request, body: nil, baseURL: baseURL, operationID: "listNotes")
            Issue.record("a refused connection returned a response")
        } catch let error as CourierError {
            #expect(error.kind == .connect)
            #expect(error.attempts == 3)
        }
        // A generated client calls the transport through the runtime's UniversalClient, which wraps what it throws in
        // a ClientError: the CourierError is its underlying error, kind intact.
        let client = UniversalClient(serverURL: baseURL, transport: transport)
        do {
            _ = try await client.send(
                input: (), forOperation: "listNotes",
                serializer: { _ in (request, nil) },
                deserializer: { _, _ in "unreachable" }
            )
            Issue.record("a refused connection returned a response")
        } catch let error as ClientError {
            #expect(error.operationID == "listNotes")
            let underlying = try #require(error.underlyingError as? CourierError)
            #expect(underlying.kind == .connect)
        }
    }

    @Test func aBodyThatBreaksOffAfterTheHeadEndsWithACourierError() async throws {
        let full = Array(String(repeating: "0123456789", count: 100).utf8)
        let server = try ScriptedServer { c in
            guard c.readRequestHead() != nil else { return }
            // Every connection promises 1000 bytes, sends 300, then dies: the route retries (connection-lost).
            c.write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
            c.write(Array(full[..<300]))
            Thread.sleep(forTimeInterval: 0.05)
            c.reset()
        }
        defer { server.stop() }
        let transport = try Self.transport()
        let (response, body) = try await Self.send(transport, .get, "/file", to: server.url(""))
        #expect(response.status.code == 200)
        var received: [UInt8] = []
        do {
            for try await chunk in try #require(body) { received += chunk }
            Issue.record("a body that broke off ended normally")
        } catch let error as CourierError {
            #expect(error.kind == .protocol)
            #expect(error.message.contains("broke off"))
        }
        // What arrived before the break is the first attempt's bytes, never a second attempt's mixed in.
        #expect(received == Array(full[..<received.count]))
        #expect(received.count <= 300)
    }
}
