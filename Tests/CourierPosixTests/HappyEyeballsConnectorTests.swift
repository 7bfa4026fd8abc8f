import Glibc
import Testing

@testable import CourierPosix
import CourierCore

extension LoopbackTests {
    @Suite struct HappyEyeballsConnectorTests {
        @Test func fallsBackFromIPv6ToIPv4() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            let loop = group.next()
            let baseline = try OpenFileDescriptors.countNotOnDisk()
            let listener = try TCPListener.bind(host: "127.0.0.1", on: loop)
            let port = listener.localAddress.port
            // Nothing listens on [::1]:port (or ::1 is not configured): the IPv6 attempt, tried first, fails
            // and IPv4 is tried at once instead of after 250 ms.
            let v6 = SocketAddress(ipAddress: "::1", port: port)!
            let start = Deadline.now()
            let connection = try await TCPConnection.connect(to: [listener.localAddress, v6], timeout: .seconds(2), on: loop)
            #expect(Deadline.now() - start < .milliseconds(250))
            #expect(connection.remoteAddress == listener.localAddress)
            connection.close()
            listener.close()
            try await expectNoDescriptorLeak(baseline: baseline)
        }

        @Test(.enabled(if: loopbackIPv6Available, "::1 is not configured on this machine"))
        func prefersIPv6WhenBothAnswer() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            let loop = group.next()
            let v6Listener = try TCPListener.bind(host: "::1", on: loop)
            defer { v6Listener.close() }
            let v4Listener = try TCPListener.bind(host: "127.0.0.1", on: loop)
            defer { v4Listener.close() }
            let connection = try await TCPConnection.connect(
                to: [v4Listener.localAddress, v6Listener.localAddress],
                timeout: .seconds(2),
                on: loop
            )
            defer { connection.close() }
            #expect(connection.remoteAddress == v6Listener.localAddress)
            #expect(connection.localAddress.family == .ipv6)
        }

        @Test func startsTheNextAttemptAfter250MillisecondsAndClosesTheLoser() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            let loop = group.next()
            guard let hole = try await makeBlackHole(on: loop) else {
                Issue.record("the network stack completed every handshake; cannot build a connect that hangs")
                return
            }
            let baseline = try OpenFileDescriptors.countNotOnDisk()
            let good = try TCPListener.bind(host: "127.0.0.1", on: loop)
            let start = Deadline.now()
            // Same family, so the given order holds: the black hole first, the good listener second.
            let connection = try await TCPConnection.connect(to: [hole.listener.localAddress, good.localAddress], timeout: .seconds(5), on: loop)
            let elapsed = Deadline.now() - start
            #expect(connection.remoteAddress == good.localAddress)
            #expect(elapsed >= .milliseconds(250))
            #expect(elapsed < .seconds(2))
            connection.close()
            good.close()
            // The losing attempt to the black hole was closed.
            try await expectNoDescriptorLeak(baseline: baseline)
            for filler in hole.fillers { filler.close() }
            hole.listener.close()
        }

        @Test func allFailedListsEachAddress() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            let loop = group.next()
            let a = try TCPListener.bind(on: loop)
            let b = try TCPListener.bind(on: loop)
            let addresses = [a.localAddress, b.localAddress]
            a.close()
            b.close()
            let error = await #expect(throws: ConnectionError.self) {
                _ = try await TCPConnection.connect(to: addresses, timeout: .seconds(2), on: loop)
            }
            #expect(error?.kind == .connectFailed)
            #expect(error?.attempts.map(\.address) == addresses)
            #expect(error?.attempts.allSatisfy { $0.error.errno == ECONNREFUSED } == true)
        }

        @Test func emptyAddressListFails() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            await #expect(throws: ConnectionError.noAddresses) {
                _ = try await TCPConnection.connect(to: [], on: group.next())
            }
        }

        @Test func connectsByHostName() async throws {
            let group = try EventLoopGroup(threads: 1)
            defer { group.shutdown() }
            let server = try EchoServer(on: group.next())
            let connection = try await TCPConnection.connect(host: "localhost", port: server.address.port, timeout: .seconds(5), on: group.next())
            try await connection.write([1, 2, 3])
            #expect(try await connection.read(timeout: .seconds(2)) == [1, 2, 3])
            connection.close()
            await server.stop()
        }
    }
}
