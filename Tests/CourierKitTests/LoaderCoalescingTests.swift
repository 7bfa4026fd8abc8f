import CourierCore
import CourierKit
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// Concurrent loads of the same cacheable request share one exchange: against a loopback server that answers
/// slowly, so that they are all in flight together.
@Suite(.timeLimit(.minutes(1))) struct LoaderCoalescingTests {
    static func policy(cache: Bool = true, authoriser: Bool = false) -> String {
        """
        version: 1
        authorisers:
          bearer: { plugin: static-bearer, settings: { token: "t" }, allow-plain-http: true }
        services:
          api:
            hosts: [127.0.0.1]
            scheme: http
            retry: { max-attempts: 1 }
        \(cache ? "    cache: { ttl: 1m }" : "")
        \(authoriser ? "    authoriser: bearer" : "")
        """
    }

    static func slowServer() throws -> RecordingServer {
        try RecordingServer { index, _ in .init(body: "answer \(index)", delay: .milliseconds(400)) }
    }

    /// Starts `count` loads of `request` (each with its index as userInfo) at once and returns their results.
    static func loadTogether(_ loader: DataLoader, _ request: Request, count: Int) async -> [Result<Response, CourierError>] {
        await withTaskGroup(of: (Int, Result<Response, CourierError>).self) { group in
            for index in 0..<count {
                var mine = request
                mine.userInfo = ["caller": String(index)]
                group.addTask {
                    do throws(CourierError) { return (index, .success(try await loader.load(mine))) } catch { return (index, .failure(error)) }
                }
            }
            var results = [Result<Response, CourierError>?](repeating: nil, count: count)
            for await (index, result) in group { results[index] = result }
            return results.map { $0! }
        }
    }

    @Test func eightIdenticalLoadsSendOneRequestAndEachGetsItsOwnCopy() async throws {
        let server = try Self.slowServer()
        let service = try makeService(Self.policy())
        let consumed = Mutex<[Int64]>([])
        service.addConsumptionObserver { c in consumed.withLock { $0.append(c.bytesReceived) } }
        let loader = service.makeFactory().makeLoader()
        let results = await Self.loadTogether(loader, Request(url: server.url("/catalogue")), count: 8)
        #expect(server.requests.count == 1)
        for (index, result) in results.enumerated() {
            let response = try result.get()
            #expect(response.status == 200)
            #expect(response.bodyText == "answer 0")
            #expect(response.userInfo["caller"] == String(index))
        }
        // The wire bytes are counted once: by the load that made the exchange.
        let bytes = consumed.withLock { $0 }
        #expect(bytes.count == 8)
        #expect(bytes.filter { $0 > 0 }.count == 1)
    }

    @Test(arguments: ["no cache", "POST", "other header", "stream"])
    func loadsThatMustNotShareAreSentEach(_ variant: String) async throws {
        let server = try Self.slowServer()
        let loader = try makeService(Self.policy(cache: variant != "no cache")).makeFactory().makeLoader()
        var first = Request(url: server.url("/x"))
        var second = first
        switch variant {
        case "POST":
            first.method = .post
            second.method = .post
        case "other header":
            first.headers.add(name: "Accept-Language", value: "de")
            second.headers.add(name: "Accept-Language", value: "en")
        default: break
        }
        if variant == "stream" {
            async let a = Self.loadTogether(loader, first, count: 1)
            var streamed = 0
            for try await event in loader.stream(second) { if case .finished = event { streamed += 1 } }
            _ = await a
            #expect(streamed == 1)
        } else {
            _ = await withTaskGroup(of: Void.self) { group in
                for request in [first, second] { group.addTask { _ = try? await loader.load(request) } }
            }
        }
        #expect(server.requests.count == 2, "\(variant)")
    }

    @Test func twoUsersOfAnAuthorisedServiceNeverShareButOneUsersLoadsDo() async throws {
        let server = try Self.slowServer()
        let service = try makeService(Self.policy(authoriser: true))
        let alice = service.makeFactory().makeLoader()
        let bob = service.makeFactory().makeLoader()
        let request = Request(url: server.url("/me"))
        async let fromAlice = Self.loadTogether(alice, request, count: 3)
        async let fromBob = Self.loadTogether(bob, request, count: 3)
        let (a, b) = await (fromAlice, fromBob)
        #expect(server.requests.count == 2)
        #expect(Set(a.map { try? $0.get().bodyText }).count == 1)
        #expect(Set(b.map { try? $0.get().bodyText }).count == 1)
        #expect(try a[0].get().bodyText != b[0].get().bodyText)
    }

    @Test func whenTheLeaderIsCancelledItsFollowersLoadOnTheirOwn() async throws {
        let server = try RecordingServer { index, _ in .init(body: "answer \(index)", delay: .seconds(2)) }
        let service = try makeService(Self.policy())
        let joined = Mutex(0)
        service.addTraceObserver { event in if case .coalesced = event.kind { joined.withLock { $0 += 1 } } }
        let loader = service.makeFactory().makeLoader()
        let request = Request(url: server.url("/shared"))
        let leader = Task { try await loader.load(request) }
        // The leader's request has reached the server, then the three followers have joined it.
        try await Self.waitUntil { server.requests.count == 1 }
        let followers = Task { await Self.loadTogether(loader, request, count: 3) }
        try await Self.waitUntil { joined.withLock { $0 } == 3 }
        leader.cancel()
        let leaderError = await #expect(throws: CourierError.self) { try await leader.value }
        #expect(leaderError?.kind == .cancelled)
        for result in await followers.value { #expect(try result.get().status == 200) }
        // The cancelled leader's request, then one more for the followers (one of them led, the others followed).
        #expect(server.requests.count == 2)
    }

    @Test func aCancelledFollowerStopsAtOnceAndTheLeaderGoesOn() async throws {
        // The leader takes 3 s: a follower that waited for it would take seconds, one that stops at once does not.
        let server = try RecordingServer { index, _ in .init(body: "answer \(index)", delay: .seconds(3)) }
        let loader = try makeService(Self.policy()).makeFactory().makeLoader()
        let request = Request(url: server.url("/slow"))
        let leader = Task { try await loader.load(request) }
        try await Task.sleep(for: .milliseconds(100))
        let follower = Task { try await loader.load(request) }
        try await Task.sleep(for: .milliseconds(50))
        let cancelledAt = ContinuousClock.now
        follower.cancel()
        let error = await #expect(throws: CourierError.self) { try await follower.value }
        #expect(error?.kind == .cancelled)
        #expect(ContinuousClock.now - cancelledAt < .milliseconds(1500))
        #expect(try await leader.value.status == 200)
        #expect(server.requests.count == 1)
    }
}

extension LoaderCoalescingTests {
    /// Polls `condition` every 10 ms for up to 20 s (a signal to wait for, not a delay to guess).
    static func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while !condition() {
            guard ContinuousClock.now < deadline else { throw CancellationError() }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

extension Response {
    /// The body as UTF-8 text.
    var bodyText: String { String(decoding: body, as: UTF8.self) }
}
