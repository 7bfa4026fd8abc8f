import Glibc
import Testing

@testable import CourierPosix
import CourierCore

@Suite struct SocketAddressTests {
    @Test func parsesAndDescribesLiterals() throws {
        let v4 = try #require(SocketAddress(ipAddress: "127.0.0.1", port: 80))
        #expect(v4.description == "127.0.0.1:80")
        #expect(v4.family == .ipv4)
        #expect(v4.ipAddress == "127.0.0.1")
        let v6 = try #require(SocketAddress(ipAddress: "::1", port: 80))
        #expect(v6.description == "[::1]:80")
        #expect(v6.family == .ipv6)
        #expect(SocketAddress(ipAddress: "[2001:DB8::1]", port: 443)?.description == "[2001:db8::1]:443")
        #expect(v4.withPort(8080).description == "127.0.0.1:8080")
    }

    @Test func rejectsNonLiteralsAndBadPorts() {
        #expect(SocketAddress(ipAddress: "localhost", port: 80) == nil)
        #expect(SocketAddress(ipAddress: "", port: 80) == nil)
        #expect(SocketAddress(ipAddress: "1.2.3.4.5", port: 80) == nil)
        #expect(SocketAddress(ipAddress: "127.0.0.1\0", port: 80) == nil)
        #expect(SocketAddress(ipAddress: "127.0.0.1", port: -1) == nil)
        #expect(SocketAddress(ipAddress: "127.0.0.1", port: 65536) == nil)
    }

    @Test func roundTripsThroughSockaddr() throws {
        for text in ["10.1.2.3", "fe80::1", "::ffff:1.2.3.4"] {
            let address = try #require(SocketAddress(ipAddress: text, port: 1234))
            let back = address.withSockAddr { pointer, _ in SocketAddress(sockaddr: pointer) }
            #expect(back == address)
        }
    }
}

@Suite struct ErrorDescriptionTests {
    @Test func systemCallErrorNamesCallAndErrno() {
        #expect(SystemCallError(call: "connect", errno: ECONNREFUSED).description == "'connect' failed: (111) Connection refused")
    }

    @Test func resolveErrorNamesHostAndCode() {
        let error = ResolveError(getaddrinfoCode: EAI_NONAME, errno: 0, host: "nope.invalid")
        #expect(error.isNameNotFound)
        #expect(error.description == "resolving 'nope.invalid' failed: (\(EAI_NONAME)) Name or service not known")
    }

    @Test func connectionErrorListsAttempts() {
        let failures = [
            ConnectAttemptFailure(address: SocketAddress(ipAddress: "::1", port: 1)!, error: SystemCallError(call: "connect", errno: ECONNREFUSED)),
            ConnectAttemptFailure(address: SocketAddress(ipAddress: "127.0.0.1", port: 1)!, error: SystemCallError(call: "connect", errno: ECONNREFUSED)),
        ]
        let error = ConnectionError.connectFailed(failures)
        #expect(error.kind == .connectFailed)
        #expect(error.description == "connect failed for every address: [::1]:1: 'connect' failed: (111) Connection refused; 127.0.0.1:1: 'connect' failed: (111) Connection refused")
        #expect(ConnectionError.readTimeout(.milliseconds(200)).kind == .readTimeout)
    }
}

@Suite struct TimerHeapTests {
    @Test func firesInDeadlineOrderAndSkipsCancelled() {
        var heap = TimerHeap<String>()
        let t = { (ms: UInt64) in Deadline(nanoseconds: ms * 1_000_000) }
        _ = heap.schedule(at: t(30), "c")
        let b = heap.schedule(at: t(20), "b")
        _ = heap.schedule(at: t(10), "a")
        _ = heap.schedule(at: t(10), "a2")
        let first = heap.cancel(b)
        let second = heap.cancel(b)
        #expect(first)
        #expect(!second)
        #expect(heap.earliestDeadline() == t(10))
        var fired: [String] = []
        heap.popExpired(now: t(25), into: &fired)
        #expect(fired == ["a", "a2"])
        #expect(heap.earliestDeadline() == t(30))
        heap.popExpired(now: t(30), into: &fired)
        #expect(fired == ["a", "a2", "c"])
        #expect(heap.count == 0)
        #expect(heap.earliestDeadline() == nil)
    }

    @Test func compactsWhenMostTimersAreCancelled() {
        var heap = TimerHeap<Int>()
        var ids: [UInt64] = []
        for index in 0..<1000 { ids.append(heap.schedule(at: Deadline(nanoseconds: UInt64(1000 - index)), index)) }
        for id in ids.dropLast() { heap.cancel(id) }
        #expect(heap.count == 1)
        var fired: [Int] = []
        heap.popExpired(now: .distantFuture, into: &fired)
        #expect(fired == [999])
    }

    @Test func instantArithmeticSaturates() {
        let start = Deadline(nanoseconds: 5)
        #expect(start + .nanoseconds(-10) == Deadline(nanoseconds: 0))
        #expect(Deadline.distantFuture + .seconds(1) == .distantFuture)
        #expect(Deadline(nanoseconds: 2_000_000) - Deadline(nanoseconds: 500_000) == .microseconds(1500))
    }
}

@Suite struct UnixSocketAddressTests {
    @Test func describesAPathAndRefusesWhatSockaddrUnCannotHold() throws {
        let address = try #require(SocketAddress(unixPath: "/run/docker.sock"))
        #expect(address.family == .unix)
        #expect(address.description == "unix:/run/docker.sock")
        #expect(address.unixPath == "/run/docker.sock")
        #expect(address.port == 0)
        #expect(SocketAddress.maxUnixPathLength == 107)
        #expect(SocketAddress(unixPath: "/" + String(repeating: "a", count: 106)) != nil)
        #expect(SocketAddress(unixPath: "/" + String(repeating: "a", count: 107)) == nil)
        #expect(SocketAddress(unixPath: "") == nil)
        #expect(SocketAddress(unixPath: "/a\u{0}b") == nil)
    }

    @Test func aUnixAddressComesLastInTheAttemptOrder() throws {
        let unix = try #require(SocketAddress(unixPath: "/tmp/x.sock"))
        let v4 = try #require(SocketAddress(ipAddress: "127.0.0.1", port: 80))
        #expect(HappyEyeballsStateMachine.attemptOrder([unix, v4]) == [v4, unix])
    }
}
