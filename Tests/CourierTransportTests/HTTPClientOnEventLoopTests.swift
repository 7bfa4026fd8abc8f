import CourierPosix
import CourierTestSupport
import CourierTransport
import Testing

/// Callers that run on the client's event loops (the fastest arrangement, Benchmarks/README.md) and
/// `runsRequestsOnEventLoop`: where the waiting task resumes, against Python's http.server on 127.0.0.1.
@Suite(.timeLimit(.minutes(1))) struct HTTPClientOnEventLoopTests {
    @Test func aCallerOnTheClientsLoopIsResumedOnThatLoop() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        let group = try EventLoopGroup(threads: 2, namePrefix: "on-loop-test")
        defer { group.shutdown() }
        let client = HTTPClient(eventLoopGroup: group)
        defer { client.shutdown() }
        #expect(client.eventLoopGroup === group)
        let loop = group.loops[1]

        let outcome = try await withTaskExecutorPreference(loop) { () async throws -> (bodiesIntact: Bool, stayed: Bool) in
            var intact = true
            var stayed = group.current === loop
            // Small bodies (read on the caller's executor) and one over 128 KiB (which a caller off the loops
            // reads with a loop as its executor): every response must find the task back on its own loop.
            for size in [100, 5000, 300_000, 100] {
                let response = try await client.execute(HTTPRequest(url: url(peer.url("/bytes/\(size)"))))
                intact = intact && response.status == 200 && response.body == pattern(size)
                stayed = stayed && group.current === loop
            }
            return (intact, stayed)
        }
        #expect(outcome.bodiesIntact)
        #expect(outcome.stayed)
        // Off the loop again once the preference ends.
        #expect(group.current == nil)
        let count = try await client.execute(HTTPRequest(url: url(peer.url("/connections"))))
        #expect(try json(count.body)["accepted"] as? Int == 1)
    }

    @Test func runsRequestsOnEventLoopReturnsEveryCallerWhereItWas() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        let group = try EventLoopGroup(threads: 2, namePrefix: "pin-test")
        defer { group.shutdown() }
        var configuration = HTTPClientConfiguration()
        configuration.runsRequestsOnEventLoop = true
        let client = HTTPClient(configuration: configuration, eventLoopGroup: group)
        defer { client.shutdown() }

        // From the global executor: the request runs on a loop, and the caller continues off the loops.
        for size in [100, 300_000] {
            let response = try await client.execute(HTTPRequest(url: url(peer.url("/bytes/\(size)"))))
            #expect(response.body == pattern(size))
            #expect(group.current == nil)
        }
        // From loop 1 (where the client keeps the request instead of pinning it to the next loop): the caller
        // is back on loop 1 after each request.
        let loop = group.loops[1]
        let stayed = try await withTaskExecutorPreference(loop) { () async throws -> Bool in
            var stayed = true
            for _ in 0..<4 {
                let response = try await client.execute(HTTPRequest(url: url(peer.url("/bytes/100"))))
                stayed = stayed && response.body == pattern(100) && group.current === loop
            }
            return stayed
        }
        #expect(stayed)
    }
}
