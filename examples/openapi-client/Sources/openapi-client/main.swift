// Runs the generated notes client (Generated/, from openapi.yaml) against the API at the URL given:
//
//     python3 server.py                                      # prints its port
//     swift run openapi-client http://127.0.0.1:PORT/v1
//
// Every request goes through a Courier DataLoader: policy.yaml decides timeouts, the rate limit and retries.
import CourierCore
import CourierKit
import CourierOpenAPI
import Foundation
import OpenAPIRuntime

guard CommandLine.arguments.count == 2, let serverURL = URL(string: CommandLine.arguments[1]) else {
    print("usage: openapi-client SERVER-URL (the API's base URL, e.g. http://127.0.0.1:8000/v1)")
    exit(2)
}

// One service per app, made from the policy; the generated client gets a transport over one of its loaders.
guard let policy = Bundle.module.path(forResource: "policy", ofType: "yaml") else { fatalError("policy.yaml is missing") }
let service: DataLoaderService
do {
    service = try DataLoaderService(policyFile: policy, configuration: .init(userAgent: "notes-example/1.0"))
} catch {
    for diagnostic in error.diagnostics { print(diagnostic) }
    exit(1)
}
let transport = CourierOpenAPITransport(loader: service.makeFactory().makeLoader())
let client = Client(serverURL: serverURL, transport: transport)

// Documented responses are cases of the operation's output.
let note = try await client.createNote(body: .json(.init(text: "buy oat milk", tags: ["home"]))).created.body.json
print("created note \(note.id): \(note.text)")
let home = try await client.listNotes(query: .init(tag: "home")).ok.body.json
print("notes tagged home: \(home.map(\.text).joined(separator: ", "))")
switch try await client.getNote(path: .init(id: 42)) {
case .ok(let found): print("note 42: \(try found.body.json.text)")
case .notFound(let missing): print("note 42: not found (\(try missing.body.json.message))")
case .undocumented(let status, _): print("note 42: undocumented status \(status)")
}

// A 3 MB attachment, uploaded as a stream (with Content-Length: its length is known) and downloaded as one.
let attachment = AttachmentSource(size: 3_000_000)
var expected = MessageDigest(.sha256)
var offset = 0
while offset < attachment.size {
    let count = min(AttachmentSource.chunkSize, attachment.size - offset)
    expected.update(AttachmentSource.bytes(at: offset, count: count))
    offset += count
}
let expectedHex = MessageDigest.hex(expected.finalize())
let stored = try await client.uploadAttachment(path: .init(id: note.id), body: .binary(attachment.body())).ok.body.json
print("uploaded \(stored.bytes) bytes as a stream: sha256 \(stored.sha256 == expectedHex ? "matches" : "DIFFERS")")
let download = try await client.downloadAttachment(path: .init(id: note.id)).ok.body.binary
var received = MessageDigest(.sha256)
var (bytes, chunks) = (0, 0)
for try await chunk in download {
    received.update(chunk)
    bytes += chunk.count
    chunks += 1
}
let receivedHex = MessageDigest.hex(received.finalize())
print("downloaded \(bytes) bytes in \(chunks > 1 ? "several chunks" : "one chunk"): sha256 \(receivedHex == expectedHex ? "matches" : "DIFFERS")")

// The server answers /flaky with 503 first: the policy retries it, and the client sees the 200.
let flaky = try await client.getFlaky().ok.body.json
print("flaky: 200 after the policy's retry (the server counted \(flaky.requests) requests)")

// /status answers 503 whatever happens: after the policy's attempts the client gets it as an undocumented status.
switch try await client.getStatus() {
case .ok: print("status: up")
case .undocumented(let status, _): print("status: undocumented status \(status) after the policy's retries")
}

// Nothing listens on port 1: the runtime's ClientError wraps the load's CourierError, whose kind is kept.
let unreachable = Client(serverURL: URL(string: "http://127.0.0.1:1/v1")!, transport: transport)
do {
    _ = try await unreachable.listNotes()
    print("unreachable: answered?")
} catch let error as ClientError {
    if let courier = error.underlyingError as? CourierError {
        print("unreachable: ClientError of \(error.operationID) wraps CourierError kind \(courier.kind) after \(courier.attempts) attempts")
    } else {
        print("unreachable: ClientError wrapping \(type(of: error.underlyingError))")
    }
}
