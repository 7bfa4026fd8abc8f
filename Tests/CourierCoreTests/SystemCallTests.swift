import CourierCore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The one system-call wrapper and the file reading built on it, against real files.
@Suite struct SystemCallTests {
    let directory: String

    init() throws {
        directory = NSTemporaryDirectory() + "courier-syscall-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    @Test func aFileIsReadWhole() throws {
        let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let path = directory + "/data"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(try SystemCall.readFile(path, maxBytes: 1 << 20) == bytes)
        #expect(try SystemCall.readFile(directory + "/data", maxBytes: bytes.count) == bytes)
        #expect(SystemCall.isRegularFile(path))
        #expect(!SystemCall.isRegularFile(directory))
        #expect(!SystemCall.isRegularFile(directory + "/absent"))
    }

    @Test func failuresNameTheCallAndErrno() throws {
        #expect(throws: SystemCall.FileReadFailure.system(SystemCallError(call: "open", errno: ENOENT))) {
            try SystemCall.readFile(directory + "/absent", maxBytes: 10)
        }
        #expect(throws: SystemCall.FileReadFailure.notAFile) { try SystemCall.readFile(directory, maxBytes: 10) }
        let path = directory + "/big"
        try Data(repeating: 1, count: 11).write(to: URL(fileURLWithPath: path))
        #expect(throws: SystemCall.FileReadFailure.tooLarge(limit: 10)) { try SystemCall.readFile(path, maxBytes: 10) }
        let described = "\(SystemCall.FileReadFailure.system(SystemCallError(call: "open", errno: ENOENT)))"
        #expect(described == "'open' failed: (2) No such file or directory")
    }

    @Test func runRetriesNothingButEINTRAndReportsWouldBlock() throws {
        var calls = 0
        let value = try SystemCall.run("test") { () -> Int32 in
            calls += 1
            if calls < 3 {
                errno = EINTR
                return -1
            }
            return 42
        }
        #expect(value == 42 && calls == 3)
        let blocked = try SystemCall.run("test", wouldBlockIsValue: true) { () -> Int32 in
            errno = EAGAIN
            return -1
        }
        #expect(blocked == nil)
        #expect(throws: SystemCallError(call: "test", errno: EAGAIN)) {
            try SystemCall.run("test") { () -> Int32 in
                errno = EAGAIN
                return -1
            }
        }
    }
}
