import Glibc
import Synchronization
import Testing

@testable import CourierPosix
import CourierCore

extension LoopbackTests {
    @Suite struct TCPConnectionEdgeCaseTests {
        @Test func readsInPiecesThenParksUntilMoreArrives() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            let loop = group.next()
            let listener = try TCPListener.bind(on: loop)
            defer { listener.close() }
            let client = try await TCPConnection.connect(to: listener.localAddress, on: loop)
            defer { client.close() }
            let server = try await listener.accept()
            defer { server.close() }
            try await server.write(Array(1...10))
            // Exactly-full reads are not "drained": the rest must still be read without waiting for an edge.
            var received: [UInt8] = []
            while received.count < 10 {
                received += try await client.read(maxBytes: 4, timeout: .seconds(2))
            }
            #expect(received == Array(1...10))
            // The reads above ran on this task, not on the loop, so the readiness edge of those 10 bytes may still
            // be on its way to the loop; delivered late, it would wake the read below once for nothing (a second
            // park, seen once in CI). One round trip through the loop consumes it first: epoll returns it with
            // the wake-up, and the loop handles events before the work it was woken for.
            _ = try await loop.submit {}
            // The buffer is now empty: the next read parks, and more bytes wake it.
            let parksBefore = client.parkCount
            let reader = Task { try await client.read(maxBytes: 64, timeout: .seconds(2)) }
            try await Task.sleep(for: .milliseconds(30))
            try await server.write([11, 12])
            #expect(try await reader.value == [11, 12])
            #expect(client.parkCount == parksBefore + 1)
            // A short read followed by bytes that arrived before the next read: nothing is lost.
            try await server.write([13])
            try await Task.sleep(for: .milliseconds(30))
            try await server.write([14])
            var tail: [UInt8] = []
            while tail.count < 2 { tail += try await client.read(maxBytes: 64, timeout: .seconds(2)) }
            #expect(tail == [13, 14])
        }

        @Test func smallWritesNeverPark() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            let server = try EchoServer(on: group.next())
            let client = try await TCPConnection.connect(to: server.address, on: group.next())
            for _ in 0..<10 { try await client.write(pattern(count: 1000)) }
            try await client.write([])
            #expect(client.parkCount == 0)
            var echoed = 0
            while echoed < 10_000 { echoed += try await client.read(timeout: .seconds(2)).count }
            client.close()
            await server.stop()
        }

        @Test func vectoredWritesKeepOrderAcrossPartialSends() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            let loop = group.next()
            let listener = try TCPListener.bind(receiveBufferSize: 4096, on: loop)
            defer { listener.close() }
            let client = try await TCPConnection.connect(to: listener.localAddress, on: loop)
            defer { client.close() }
            try client.setSendBufferSize(4096)
            let server = try await listener.accept()
            defer { server.close() }
            // 100 buffers (more than one sendmsg takes), odd sizes, some empty, 600 KiB in all: with small
            // socket buffers the sends are partial and the write parks.
            let buffers = (0..<100).map { index in index % 10 == 3 ? [] : pattern(count: 6000 + index * 7).map { $0 &+ UInt8(index) } }
            let expected = buffers.flatMap { $0 }
            let writer = Task { try await client.write(vectored: buffers, timeout: .seconds(10)) }
            let received = try await withDeadline(10, "vectored bytes") { [server] in
                var received: [UInt8] = []
                while received.count < expected.count {
                    let bytes = try await server.read(maxBytes: 64 * 1024, timeout: .seconds(5))
                    try #require(!bytes.isEmpty)
                    received += bytes
                }
                return received
            }
            try await writer.value
            #expect(received == expected)
            #expect(client.parkCount > 0)
            try await client.write(vectored: [[], []])
        }

        @Test func sixtyFourConnectionsInFlightOnOneLoop() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            let loop = group.next()
            let baseline = try OpenFileDescriptors.countNotOnDisk()
            let server = try EchoServer(on: loop)
            try await withThrowingTaskGroup(of: Int.self) { tasks in
                for index in 0..<64 {
                    tasks.addTask {
                        try await withTaskExecutorPreference(loop) {
                            let connection = try await TCPConnection.connect(to: server.address, timeout: .seconds(5), on: loop)
                            defer { connection.close() }
                            for round in 0..<20 {
                                let message = Array("\(index)-\(round)".utf8)
                                try await connection.write(message)
                                var reply: [UInt8] = []
                                while reply.count < message.count {
                                    let bytes = try await connection.read(timeout: .seconds(5))
                                    try #require(!bytes.isEmpty)
                                    reply += bytes
                                }
                                try #require(reply == message)
                            }
                            return 20
                        }
                    }
                }
                var total = 0
                for try await rounds in tasks { total += rounds }
                #expect(total == 64 * 20)
            }
            await server.stop()
            try await expectNoDescriptorLeak(baseline: baseline)
        }

        @Test func acceptTimesOutAndClosesTheListener() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            let listener = try TCPListener.bind(on: group.next())
            await #expect(throws: ConnectionError.readTimeout(.milliseconds(50))) {
                _ = try await listener.accept(timeout: .milliseconds(50))
            }
            #expect(!listener.isOpen)
        }

        @Test func listenerRefusesHostNamesAndBusyPorts() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            let loop = group.next()
            #expect(throws: ResolveError.self) { _ = try TCPListener.bind(host: "localhost", on: loop) }
            #expect(throws: ResolveError.self) { _ = try TCPListener.bind(host: "127.0.0.1", port: 70000, on: loop) }
            let first = try TCPListener.bind(on: loop)
            defer { first.close() }
            // SO_REUSEADDR does not allow two listeners on one port.
            let error = #expect(throws: SystemCallError.self) {
                _ = try TCPListener.bind(host: "127.0.0.1", port: first.localAddress.port, on: loop)
            }
            #expect(error?.call == "bind")
            #expect(error?.errno == EADDRINUSE)
        }

        @Test func connectByHostReportsResolveErrors() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            await #expect(throws: ResolveError.self) {
                _ = try await TCPConnection.connect(host: "", port: 80, on: group.next())
            }
        }

        @Test func cancellingTheReaderFailsAParkedWriterAsClosed() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            let loop = group.next()
            let listener = try TCPListener.bind(receiveBufferSize: 4096, on: loop)
            defer { listener.close() }
            let client = try await TCPConnection.connect(to: listener.localAddress, on: loop)
            try client.setSendBufferSize(4096)
            let server = try await listener.accept()
            defer { server.close() }
            let reader = Task { try await client.read() }
            let writer = Task { try await client.write([UInt8](repeating: 7, count: 4 << 20)) }
            try await Task.sleep(for: .milliseconds(50))
            reader.cancel()
            let readResult = await reader.result
            let writeResult = await writer.result
            // The cancellation belongs to the reading task; the writer only sees a closed connection.
            #expect(throws: CancellationError.self) { try readResult.get() }
            #expect(throws: ConnectionError.closed) { try writeResult.get() }
            #expect(!client.isOpen)
        }

        @Test func closeFromAnotherTaskWakesBothDirections() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            let loop = group.next()
            let listener = try TCPListener.bind(receiveBufferSize: 4096, on: loop)
            defer { listener.close() }
            let client = try await TCPConnection.connect(to: listener.localAddress, on: loop)
            try client.setSendBufferSize(4096)
            let server = try await listener.accept()
            defer { server.close() }
            let reader = Task { try await client.read() }
            let writer = Task { try await client.write([UInt8](repeating: 7, count: 4 << 20)) }
            try await Task.sleep(for: .milliseconds(50))
            client.close()
            let readResult = await reader.result
            let writeResult = await writer.result
            #expect(throws: ConnectionError.closed) { try readResult.get() }
            #expect(throws: ConnectionError.closed) { try writeResult.get() }
        }
    }
}

extension LoopbackTests.TCPConnectionEdgeCaseTests {
    @Test func closedConnectionsAreFreed() async throws {
        let group = try EventLoopGroup(threads: 1)
        defer { group.shutdown() }
        let loop = group.next()
        let listener = try TCPListener.bind(on: loop)
        defer { listener.close() }
        weak var weakClient: TCPConnection?
        weak var weakServer: TCPConnection?
        do {
            let client = try await TCPConnection.connect(to: listener.localAddress, timeout: .seconds(2), on: loop)
            let server = try await listener.accept()
            // Exercise a parked read with an idle timer, so a timer closure exists too.
            let reader = Task { try await client.read(timeout: .seconds(30)) }
            try await Task.sleep(for: .milliseconds(20))
            try await server.write([1])
            _ = try await reader.value
            weakClient = client
            weakServer = server
            client.close()
            server.close()
        }
        // Nothing (registration table, timers, connector) keeps a closed connection alive.
        #expect(try await eventually { weakClient == nil && weakServer == nil })
    }
}

@Suite struct RandomInputTests {
    /// Bounded random input: address parsing must never crash and must only accept what round-trips.
    @Test func addressParsingSurvivesRandomText() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("0123456789abcdefABCDEF:.[]%/ -\u{0}x")
        for _ in 0..<5000 {
            let length = Int.random(in: 0...45, using: &generator)
            let text = String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
            let port = Int.random(in: -10...70000, using: &generator)
            if let address = SocketAddress(ipAddress: text, port: port) {
                #expect((0...65535).contains(port))
                #expect(SocketAddress(ipAddress: address.ipAddress, port: port) == address)
            }
        }
    }
}
