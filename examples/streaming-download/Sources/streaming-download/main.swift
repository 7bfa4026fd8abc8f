// streaming-download URL FILE
//
// Streams URL into FILE through a DataLoader: each chunk is written as it arrives (memory stays flat whatever
// the size), progress goes to standard error, and when the route retries an attempt whose body broke off, the
// file starts again from its first byte. Prints the byte count and SHA-256 of what was written.
import CourierKit
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: streaming-download URL FILE\n".utf8))
    exit(2)
}
let (url, path) = (arguments[1], arguments[2])

guard let policy = Bundle.module.path(forResource: "policy", ofType: "yaml") else { fatalError("policy.yaml is missing") }
let service = try DataLoaderService(policyFile: policy, configuration: .init(userAgent: "streaming-download/1"))
let loader = service.makeFactory().makeLoader()

guard FileManager.default.createFile(atPath: path, contents: nil), let file = FileHandle(forWritingAtPath: path) else {
    FileHandle.standardError.write(Data("cannot write \(path)\n".utf8))
    exit(1)
}
defer { try? file.close() }

var hash = MessageDigest(.sha256)
var written: Int64 = 0
var expected: Int64?
do {
    for try await event in loader.stream(Request(url: url)) {
        switch event {
        case .response(let head):
            expected = head.headers["content-length"].flatMap { Int64($0) }
            FileHandle.standardError.write(Data("status \(head.status), attempt \(head.attempt)\n".utf8))
        case .chunk(let bytes):
            try file.write(contentsOf: bytes)
            hash.update(bytes)
            written += Int64(bytes.count)
            if let expected, expected > 0 {
                FileHandle.standardError.write(Data("\r\(written * 100 / expected)%".utf8))
            }
        case .retrying(let attempt, let reason):
            // The previous attempt's bytes are void: start the file (and the digest) again.
            FileHandle.standardError.write(Data("\nattempt \(attempt) after \(reason)\n".utf8))
            try file.truncate(atOffset: 0)
            try file.seek(toOffset: 0)
            hash = MessageDigest(.sha256)
            written = 0
        case .resuming(let attempt, let offset, let reason):
            // The body continues where it broke off (a 206): keep the file; the next chunks follow on.
            FileHandle.standardError.write(Data("\nattempt \(attempt) resumes at byte \(offset) after \(reason)\n".utf8))
        case .finished(let response):
            FileHandle.standardError.write(Data("\n".utf8))
            guard response.isSuccess else {
                print("failed: status \(response.status)")
                exit(1)
            }
            print("\(written) bytes, sha256 \(MessageDigest.hex(hash.finalize())), \(response.attempts) attempt(s), \(response.bytesReceived) bytes on the wire")
        }
    }
} catch {
    print("failed: \(error)")
    exit(1)
}
