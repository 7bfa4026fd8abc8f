import CourierCore
import Foundation
import Synchronization
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

    /// A pipe read to its end while signals interrupt the reader (a handler without `SA_RESTART`, as a
    /// `SIGCHLD` handler is): every `EINTR` is retried, nothing is lost, and the limit still holds.
    @Test func aPipeIsReadToItsEndThroughInterruptingSignals() async throws {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        var previous = sigaction()
        #expect(sigaction(SIGUSR2, &action, &previous) == 0)
        defer { sigaction(SIGUSR2, &previous, nil) }
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let (readEnd, writeEnd) = (ends[0], ends[1])
        defer { close(readEnd) }
        let reader = Mutex<pthread_t?>(nil)
        let result = Mutex<Result<[UInt8], SystemCall.FileReadFailure>?>(nil)
        let thread = Thread {
            // A thread inherits its creator's signal mask, and the cooperative pool's threads block signals.
            var unblocked = sigset_t()
            sigemptyset(&unblocked)
            sigaddset(&unblocked, SIGUSR2)
            pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
            reader.withLock { $0 = pthread_self() }
            let outcome = Result { () throws(SystemCall.FileReadFailure) in try SystemCall.readToEnd(fileDescriptor: readEnd) }
            result.withLock { $0 = outcome }
        }
        thread.start()
        var waited = 0
        while reader.withLock({ $0 }) == nil && waited < 2_000 { try await Task.sleep(for: .milliseconds(1)); waited += 1 }
        let target = try #require(reader.withLock { $0 })
        let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        for chunk in stride(from: 0, to: bytes.count, by: 25_000) {
            // The reader is blocked in read(2) when the signal lands, most of the time; a signal between two
            // reads is harmless too.
            try await Task.sleep(for: .milliseconds(20))
            // A reader that gave up would leave the pipe full and the write below blocked for good.
            guard result.withLock({ $0 }) == nil else { break }
            #expect(pthread_kill(target, SIGUSR2) == 0)
            try await Task.sleep(for: .milliseconds(5))
            _ = bytes[chunk..<min(chunk + 25_000, bytes.count)].withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count) }
        }
        close(writeEnd)
        waited = 0
        while result.withLock({ $0 }) == nil && waited < 5_000 { try await Task.sleep(for: .milliseconds(1)); waited += 1 }
        #expect(try result.withLock { $0 }?.get() == bytes)

        // The limit: more than maxBytes is an error, not a truncated read.
        #expect(pipe(&ends) == 0)
        _ = [UInt8](repeating: 1, count: 11).withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) }
        close(ends[1])
        #expect(throws: SystemCall.FileReadFailure.tooLarge(limit: 10)) { try SystemCall.readToEnd(fileDescriptor: ends[0], maxBytes: 10) }
        close(ends[0])
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
