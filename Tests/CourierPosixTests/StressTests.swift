import CourierCore
import Glibc
import Synchronization
import Testing

@testable import CourierPosix

extension LoopbackTests {
    /// Bounded races between closing and I/O on other threads: nothing may crash (an fd closed under a
    /// running call would trip the EBADF precondition), hang, or leak.
    @Suite struct StressTests {
        @Test func closeRacesWithReadsAndWrites() async throws {
            let group = try EventLoopGroup(threads: 2)
            defer { group.shutdown() }
            let baseline = try OpenFileDescriptors.countNotOnDisk()
            let server = try EchoServer(on: group.loops[0])
            for round in 0..<100 {
                let client = try await TCPConnection.connect(to: server.address, timeout: .seconds(5), on: group.loops[1])
                try await withDeadline(5, "round \(round)") {
                    await withTaskGroup(of: Void.self) { tasks in
                        tasks.addTask {
                            while (try? await client.write(pattern(count: 512))) != nil {}
                        }
                        tasks.addTask {
                            while let bytes = try? await client.read(maxBytes: 256), !bytes.isEmpty {}
                        }
                        tasks.addTask {
                            // Close from yet another task after a varying moment.
                            for _ in 0..<(round % 7) { await Task.yield() }
                            client.close()
                        }
                    }
                }
                #expect(!client.isOpen)
            }
            await server.stop()
            try await expectNoDescriptorLeak(baseline: baseline)
        }

        @Test func executeFromManyThreadsRunsEverything() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            let loop = group.next()
            let count = Counter()
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                for _ in 0..<8 {
                    tasks.addTask {
                        for _ in 0..<1000 { loop.execute { count.increment() } }
                        _ = try await loop.submit { 0 }
                    }
                }
                try await tasks.waitForAll()
            }
            _ = try await loop.submit { 0 }
            #expect(count.value == 8000)
        }

        @Test func manyTimersFromManyThreads() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            let loop = group.next()
            let fired = Counter()
            let start = Deadline.now()
            await withTaskGroup(of: Void.self) { tasks in
                for task in 0..<4 {
                    tasks.addTask {
                        for index in 0..<250 {
                            let id = loop.scheduleTimer(in: .milliseconds((index * 7 + task) % 50)) {
                                fired.increment()
                            }
                            // Cancel every fifth one.
                            if index % 5 == 0 { loop.cancelTimer(id) }
                        }
                    }
                }
            }
            let done = try await eventually(2) { fired.value >= 800 }
            #expect(done)
            try await Task.sleep(for: .milliseconds(60))
            let total = fired.value
            // Cancelling can race with firing only for timers already due; at most all 1000 fire, at
            // least the 800 uncancelled ones.
            #expect(total >= 800 && total <= 1000)
            #expect(Deadline.now() - start < .seconds(2))
        }
    }
}
