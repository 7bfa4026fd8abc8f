import CourierCore
import Glibc
import Synchronization
import Testing

@testable import CourierPosix
import CourierTestSupport

/// Thrown when a bounded wait in a test runs out.
struct TestTimedOut: Error, CustomStringConvertible {
    var what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Runs `body`, failing with `TestTimedOut` if it takes longer than `seconds` (the body is cancelled).
func withDeadline<T: Sendable>(
    _ seconds: Double,
    _ what: String = "the operation",
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            throw TestTimedOut(what: what)
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
}

/// Polls `condition` every 5 ms for up to `seconds`.
func eventually(_ seconds: Double = 2, _ condition: () throws -> Bool) async throws -> Bool {
    let deadline = Deadline.now() + .milliseconds(Int(seconds * 1000))
    while Deadline.now() < deadline {
        if try condition() { return true }
        try await Task.sleep(for: .milliseconds(5))
    }
    return try condition()
}

/// Expects the process's sockets, pipes and event descriptors to fall back to `baseline` within 10 s
/// (``settledDescriptorCount(atMost:within:)``: other work closes late; a leak never settles).
func expectNoDescriptorLeak(baseline: Int, sourceLocation: Testing.SourceLocation = #_sourceLocation) async throws {
    let now = try await settledDescriptorCount(atMost: baseline)
    #expect(now <= baseline, "descriptors: \(baseline) before, \(now) after", sourceLocation: sourceLocation)
}

/// A loopback server that echoes every byte back until the client closes.
final class EchoServer: Sendable {
    let listener: TCPListener
    private let task: Task<Void, Never>

    init(host: String = "127.0.0.1", on loop: EventLoop) throws {
        let listener = try TCPListener.bind(host: host, on: loop)
        self.listener = listener
        task = Task {
            await withTaskGroup(of: Void.self) { group in
                while let connection = try? await listener.accept() {
                    group.addTask {
                        defer { connection.close() }
                        while let bytes = try? await connection.read(), !bytes.isEmpty {
                            guard (try? await connection.write(bytes)) != nil else { return }
                        }
                    }
                }
            }
        }
    }

    var address: SocketAddress { listener.localAddress }

    /// Stops accepting and waits until every echo connection has closed.
    func stop() async {
        listener.close()
        await task.value
    }
}

/// A 127.0.0.1 listener whose accept queue is full and never drained: connects to it hang in SYN_SENT.
///
/// Returns nil when the network stack does not behave that way (it completes handshakes regardless).
func makeBlackHole(on loop: EventLoop) async throws -> (listener: TCPListener, fillers: [TCPConnection])? {
    let listener = try TCPListener.bind(host: "127.0.0.1", backlog: 0, on: loop)
    var fillers: [TCPConnection] = []
    for _ in 0..<16 {
        do {
            fillers.append(try await TCPConnection.connect(to: listener.localAddress, timeout: .milliseconds(150), on: loop))
        } catch let error as ConnectionError where error.kind == .connectTimeout {
            return (listener, fillers)
        }
    }
    for filler in fillers { filler.close() }
    listener.close()
    return nil
}

/// A deterministic byte pattern.
func pattern(count: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
}

/// True when `::1` can be bound on this machine (checked once, without an event loop).
let loopbackIPv6Available: Bool = {
    guard let fd = try? Syscall.socket(domain: AF_INET6, type: Int32(SOCK_STREAM.rawValue)) else { return false }
    let descriptor = FileDescriptor(takingOwnershipOf: fd)
    defer { descriptor.close() }
    return (try? Syscall.bind(fd, to: SocketAddress(ipAddress: "::1", port: 0)!)) != nil
}()

/// A thread-safe counter that escaping closures can share.
final class Counter: Sendable {
    private let storage = Atomic(0)

    func increment() { storage.wrappingAdd(1, ordering: .relaxed) }
    var value: Int { storage.load(ordering: .relaxed) }
}
