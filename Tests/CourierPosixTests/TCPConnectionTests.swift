import Glibc
import Synchronization
import Testing

@testable import CourierPosix
import CourierCore

extension LoopbackTests {
    @Suite struct TCPConnectionTests {
        @Test func echoRoundTrips() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            let baseline = try OpenFileDescriptors.countNotOnDisk()
            let server = try EchoServer(on: group.next())
            let connection = try await TCPConnection.connect(to: server.address, timeout: .seconds(2), on: group.next())
            #expect(connection.remoteAddress == server.address)
            #expect(connection.localAddress.ipAddress == "127.0.0.1")
            for round in 0..<50 {
                let message = Array("ping \(round)".utf8)
                try await connection.write(message)
                var received: [UInt8] = []
                while received.count < message.count {
                    let bytes = try await connection.read(maxBytes: 1024, timeout: .seconds(2))
                    try #require(!bytes.isEmpty)
                    received += bytes
                }
                #expect(received == message)
            }
            // The zero-copy read path.
            try await connection.write(Array("abc".utf8))
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16, alignment: 1)
            defer { buffer.deallocate() }
            var total = 0
            while total < 3 {
                total += try await connection.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[total...]), timeout: .seconds(2))
            }
            #expect(Array(buffer[0..<3]) == Array("abc".utf8))
            connection.close()
            connection.close()  // idempotent
            await #expect(throws: ConnectionError.closed) { try await connection.read() }
            await server.stop()
            try await expectNoDescriptorLeak(baseline: baseline)
        }

        @Test func readsEndOfFileAfterPeerCloses() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            let loop = group.next()
            let listener = try TCPListener.bind(on: loop)
            defer { listener.close() }
            let client = try await TCPConnection.connect(to: listener.localAddress, on: loop)
            defer { client.close() }
            let server = try await listener.accept(timeout: .seconds(2))
            try await server.write(Array("bye".utf8))
            server.close()
            var received: [UInt8] = []
            while true {
                let bytes = try await client.read(timeout: .seconds(2))
                if bytes.isEmpty { break }
                received += bytes
            }
            #expect(received == Array("bye".utf8))
            // End of file stays end of file.
            #expect(try await client.read(timeout: .seconds(2)).isEmpty)
        }

        @Test func megabyteWriteParksUntilTheSlowPeerReads() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            let baseline = try OpenFileDescriptors.countNotOnDisk()
            let loop = group.next()
            let listener = try TCPListener.bind(receiveBufferSize: 4096, on: loop)
            let client = try await TCPConnection.connect(to: listener.localAddress, on: loop)
            try client.setSendBufferSize(4096)
            let server = try await listener.accept()
            let payload = pattern(count: 1 << 20)
            let writer = Task { try await client.write(payload, timeout: .seconds(10)) }
            // The peer is slow: it reads nothing for a while, so the write must park on EPOLLOUT.
            try await Task.sleep(for: .milliseconds(100))
            #expect(client.parkCount > 0)
            let received = try await withDeadline(10, "1 MiB to arrive") { [server] in
                var received: [UInt8] = []
                while received.count < payload.count {
                    let bytes = try await server.read(maxBytes: 64 * 1024, timeout: .seconds(5))
                    try #require(!bytes.isEmpty)
                    received += bytes
                }
                return received
            }
            try await writer.value
            #expect(received == payload)
            client.close()
            server.close()
            listener.close()
            try await expectNoDescriptorLeak(baseline: baseline)
        }

        @Test func aDeadlineIsAbsoluteEvenWhileTheWriteKeepsMakingProgress() async throws {
            // The peer reads 4 KiB every 20 ms: each wait for buffer space is short, but a 1 MiB write needs about
            // 5 s. The deadline (1 s away: room for several reads however busy the machine) holds for the whole
            // operation, not for each wait.
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
            // On the test's own loop, not the cooperative pool: with the rest of the suite running, a pool task
            // could miss the deadline's window, and the write would wait only once.
            let reader = Task(executorPreference: loop) { [server] in
                while !Task.isCancelled {
                    guard let bytes = try? await server.read(maxBytes: 4096, timeout: .seconds(2)), !bytes.isEmpty else { return }
                    try? await Task.sleep(for: .milliseconds(20))
                }
            }
            defer { reader.cancel() }
            // The writer too: each time the reader frees space, the write resumes on the loop at once, not behind
            // the pool's queue.
            let (error, took) = await withTaskExecutorPreference(loop) {
                let started = Deadline.now()
                let error = await #expect(throws: ConnectionError.self) {
                    try await client.write(pattern(count: 1 << 20), deadline: started + .seconds(1))
                }
                return (error, Deadline.now() - started)
            }
            #expect(error?.kind == .writeTimeout)
            #expect(client.parkCount > 1, "the write waited more than once")
            #expect(took >= .milliseconds(990) && took < .seconds(3), "took \(took)")
        }

        @Test func connectRefusedCarriesTheErrno() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            let baseline = try OpenFileDescriptors.countNotOnDisk()
            let loop = group.next()
            // A port that was just free: bind, note it, close.
            let listener = try TCPListener.bind(on: loop)
            let address = listener.localAddress
            listener.close()
            let error = await #expect(throws: ConnectionError.self) {
                _ = try await TCPConnection.connect(to: address, timeout: .seconds(2), on: loop)
            }
            #expect(error?.kind == .connectFailed)
            #expect(error?.attempts.count == 1)
            #expect(error?.attempts.first?.error.errno == ECONNREFUSED)
            #expect(error?.attempts.first?.address == address)
            #expect(error?.description == "connect to \(address): 'connect' failed: (111) Connection refused")
            try await expectNoDescriptorLeak(baseline: baseline)
        }

        @Test func connectTimesOutAgainstAFullBacklog() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            let loop = group.next()
            let baseline = try OpenFileDescriptors.countNotOnDisk()
            guard let hole = try await makeBlackHole(on: loop) else {
                Issue.record("the network stack completed every handshake; cannot build a connect that hangs")
                return
            }
            let start = Deadline.now()
            let error = await #expect(throws: ConnectionError.self) {
                _ = try await TCPConnection.connect(to: hole.listener.localAddress, timeout: .milliseconds(300), on: loop)
            }
            let elapsed = Deadline.now() - start
            #expect(error?.kind == .connectTimeout)
            #expect(elapsed >= .milliseconds(300))
            #expect(elapsed < .seconds(2))
            for filler in hole.fillers { filler.close() }
            hole.listener.close()
            try await expectNoDescriptorLeak(baseline: baseline)
        }

        @Test func readIdleTimeoutClosesTheConnection() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            let loop = group.next()
            let listener = try TCPListener.bind(on: loop)
            defer { listener.close() }
            let client = try await TCPConnection.connect(to: listener.localAddress, on: loop)
            let server = try await listener.accept()
            defer { server.close() }
            let start = Deadline.now()
            await #expect(throws: ConnectionError.readTimeout(.milliseconds(200))) {
                _ = try await client.read(timeout: .milliseconds(200))
            }
            let elapsed = Deadline.now() - start
            #expect(elapsed >= .milliseconds(200))
            #expect(elapsed < .seconds(2))
            #expect(!client.isOpen)
        }

        @Test func theChannelEndsAWaitAtTheIdleTimeoutOrTheDeadlineWhicheverComesFirst() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            let loop = group.next()
            let listener = try TCPListener.bind(on: loop)
            defer { listener.close() }
            // A far deadline and a short idle timeout: the idle timeout ends the wait.
            let idleFirst = try await TCPConnection.connect(to: listener.localAddress, on: loop)
            let server1 = try await listener.accept()
            defer { server1.close() }
            var start = Deadline.now()
            await #expect(throws: ConnectionError.readTimeout(.milliseconds(150))) {
                _ = try await idleFirst.read(maxBytes: 64, deadline: .now() + .seconds(30), idle: .milliseconds(150))
            }
            #expect(Deadline.now() - start < .seconds(2))
            // A near deadline and a long idle timeout: the deadline ends it, and it is the deadline the error names.
            let deadlineFirst = try await TCPConnection.connect(to: listener.localAddress, on: loop)
            let server2 = try await listener.accept()
            defer { server2.close() }
            start = Deadline.now()
            await #expect(throws: ConnectionError.readTimeout(.milliseconds(150))) {
                _ = try await deadlineFirst.read(maxBytes: 64, deadline: start + .milliseconds(150), idle: .seconds(30))
            }
            let elapsed = Deadline.now() - start
            #expect(elapsed >= .milliseconds(140) && elapsed < .seconds(2))
            // Data that is there is read whatever the timeouts: the bound applies to waiting only.
            let ready = try await TCPConnection.connect(to: listener.localAddress, on: loop)
            defer { ready.close() }
            let server3 = try await listener.accept()
            defer { server3.close() }
            try await server3.write([7])
            try await Task.sleep(for: .milliseconds(50))
            #expect(try await ready.read(maxBytes: 64, deadline: .now() + .seconds(5), idle: .milliseconds(100)) == [7])
        }

        @Test func readWithinTheTimeoutSucceedsAndTheTimerRearms() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            let loop = group.next()
            let listener = try TCPListener.bind(on: loop)
            defer { listener.close() }
            let client = try await TCPConnection.connect(to: listener.localAddress, on: loop)
            defer { client.close() }
            let server = try await listener.accept()
            defer { server.close() }
            // Several short waits under one long timeout: the single per-connection timer must not fire early.
            for _ in 0..<3 {
                let reader = Task { try await client.read(timeout: .milliseconds(300)) }
                try await Task.sleep(for: .milliseconds(120))
                try await server.write([1])
                #expect(try await reader.value == [1])
            }
            #expect(client.isOpen)
        }

        @Test func aShorterTimeoutIsHonouredWhileALongerTimerIsArmed() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            let loop = group.next()
            let listener = try TCPListener.bind(on: loop)
            defer { listener.close() }
            let client = try await TCPConnection.connect(to: listener.localAddress, on: loop)
            let server = try await listener.accept()
            defer { server.close() }
            // The first read arms a 5 s timer and is answered at once.
            let first = Task { try await client.read(timeout: .seconds(5)) }
            try await Task.sleep(for: .milliseconds(30))
            try await server.write([1])
            #expect(try await first.value == [1])
            // The second read must time out after 100 ms, not when the 5 s timer fires.
            let start = Deadline.now()
            await #expect(throws: ConnectionError.readTimeout(.milliseconds(100))) {
                _ = try await client.read(timeout: .milliseconds(100))
            }
            #expect(Deadline.now() - start < .seconds(1))
        }

        @Test func cancellingAParkedReadResumesPromptlyAndCloses() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            let baseline = try OpenFileDescriptors.countNotOnDisk()
            let loop = group.next()
            let listener = try TCPListener.bind(on: loop)
            let client = try await TCPConnection.connect(to: listener.localAddress, on: loop)
            let server = try await listener.accept()
            let reader = Task { try await client.read() }
            try await Task.sleep(for: .milliseconds(50))
            #expect(client.parkCount == 1)
            let start = Deadline.now()
            reader.cancel()
            let result = await reader.result
            #expect(Deadline.now() - start < .milliseconds(500))
            #expect(throws: CancellationError.self) { try result.get() }
            #expect(!client.isOpen)
            // The peer sees the close.
            #expect(try await server.read(timeout: .seconds(2)).isEmpty)
            server.close()
            listener.close()
            try await expectNoDescriptorLeak(baseline: baseline)
        }

        @Test func cancellingAParkedConnectResumesPromptly() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            let loop = group.next()
            let baseline = try OpenFileDescriptors.countNotOnDisk()
            guard let hole = try await makeBlackHole(on: loop) else {
                Issue.record("the network stack completed every handshake; cannot build a connect that hangs")
                return
            }
            let attemptBaseline = try OpenFileDescriptors.countNotOnDisk()
            let connecting = Task { try await TCPConnection.connect(to: hole.listener.localAddress, timeout: .seconds(30), on: loop) }
            try await Task.sleep(for: .milliseconds(100))
            let start = Deadline.now()
            connecting.cancel()
            let result = await connecting.result
            #expect(Deadline.now() - start < .milliseconds(500))
            #expect(throws: CancellationError.self) { try result.get() }
            // The attempt's socket is closed.
            try await expectNoDescriptorLeak(baseline: attemptBaseline)
            for filler in hole.fillers { filler.close() }
            hole.listener.close()
            try await expectNoDescriptorLeak(baseline: baseline)
        }

        @Test func cancelledTaskDoesNotPark() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            let loop = group.next()
            let listener = try TCPListener.bind(on: loop)
            defer { listener.close() }
            let client = try await TCPConnection.connect(to: listener.localAddress, on: loop)
            let server = try await listener.accept()
            defer { server.close() }
            let reader = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await client.read()
            }
            let result = await reader.result
            #expect(throws: CancellationError.self) { try result.get() }
            #expect(!client.isOpen)
        }

        @Test func detectsAPeerThatClosedWhileIdle() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            let loop = group.next()
            let listener = try TCPListener.bind(on: loop)
            defer { listener.close() }
            let client = try await TCPConnection.connect(to: listener.localAddress, on: loop)
            defer { client.close() }
            let server = try await listener.accept()
            #expect(!client.isClosedByPeer())
            #expect(!client.hasPendingInput())
            try await server.write([42])
            #expect(try await eventually { client.hasPendingInput() })
            // Pending bytes are not a close, and peeking does not consume them.
            #expect(!client.isClosedByPeer())
            #expect(try await client.read(timeout: .seconds(1)) == [42])
            #expect(!client.hasPendingInput())
            server.close()
            #expect(try await eventually { client.isClosedByPeer() })
            client.close()
            #expect(client.isClosedByPeer())
        }

        @Test func concurrentReadsAreRefused() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            let loop = group.next()
            let listener = try TCPListener.bind(on: loop)
            defer { listener.close() }
            let client = try await TCPConnection.connect(to: listener.localAddress, on: loop)
            defer { client.close() }
            let server = try await listener.accept()
            defer { server.close() }
            let first = Task { try await client.read(timeout: .seconds(2)) }
            try await Task.sleep(for: .milliseconds(30))
            let error = await #expect(throws: ConnectionError.self) { _ = try await client.read() }
            #expect(error?.kind == .concurrentOperation)
            try await server.write([7])
            #expect(try await first.value == [7])
        }

        @Test func writeToAResetPeerFailsWithTheErrno() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            let loop = group.next()
            let listener = try TCPListener.bind(on: loop)
            defer { listener.close() }
            let client = try await TCPConnection.connect(to: listener.localAddress, on: loop)
            let server = try await listener.accept()
            server.close()
            let error = await #expect(throws: SystemCallError.self) {
                for _ in 0..<100 {
                    try await client.write(pattern(count: 64 * 1024), timeout: .seconds(2))
                    try await Task.sleep(for: .milliseconds(5))
                }
            }
            #expect(error?.call == "send")
            #expect(error?.errno == EPIPE || error?.errno == ECONNRESET)
            #expect(!client.isOpen)
        }

        @Test func connectionsSpreadOverSeveralLoops() async throws {
            let group = try EventLoopGroup(threads: 3)
            defer { group.shutdown() }
            let server = try EchoServer(on: group.loops[0])
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                for index in 0..<6 {
                    let loop = group.next()
                    tasks.addTask {
                        let connection = try await TCPConnection.connect(to: server.address, on: loop)
                        defer { connection.close() }
                        #expect(connection.eventLoop === loop)
                        let message = pattern(count: 10_000 + index)
                        try await connection.write(message)
                        var received: [UInt8] = []
                        while received.count < message.count {
                            let bytes = try await connection.read(timeout: .seconds(2))
                            try #require(!bytes.isEmpty)
                            received += bytes
                        }
                        #expect(received == message)
                    }
                }
                try await tasks.waitForAll()
            }
            await server.stop()
        }

        @Test func thousandConnectCloseCyclesLeakNoDescriptor() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            let loop = group.next()
            let listener = try TCPListener.bind(on: loop)
            let acceptor = Task {
                while let connection = try? await listener.accept() { connection.close() }
            }
            // Warm up (lazily created runtime descriptors are not leaks).
            try await TCPConnection.connect(to: listener.localAddress, on: loop).close()
            let baseline = try OpenFileDescriptors.countNotOnDisk()
            let start = Deadline.now()
            for _ in 0..<1000 {
                let connection = try await TCPConnection.connect(to: listener.localAddress, timeout: .seconds(2), on: loop)
                connection.close()
            }
            #expect(Deadline.now() - start < .seconds(20))
            listener.close()
            await acceptor.value
            try await expectNoDescriptorLeak(baseline: baseline - 1)
        }
    }
}
