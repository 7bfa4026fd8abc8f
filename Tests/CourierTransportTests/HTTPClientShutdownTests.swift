import CourierCore
import CourierHTTP1
import CourierPosix
import CourierTestSupport
import CourierTransport
import Synchronization
import Testing

/// `HTTPClient.shutdown(gracePeriod:)` against a slow loopback server (Python's http.server).
@Suite(.timeLimit(.minutes(2))) struct HTTPClientShutdownTests {
    /// How one request ended, as its caller saw it.
    enum Outcome: Equatable {
        case body(Int)
        case failure(CourierError.Kind)
    }

    /// Runs request `index` of `target`, whole (even `index`) or streamed (odd), and returns how it ended.
    static func run(_ index: Int, _ target: HTTPURL, on client: HTTPClient) async -> Outcome {
        do throws(CourierError) {
            if index % 2 == 0 { return .body(try await client.execute(HTTPRequest(url: target)).body.count) }
            let response = try await client.stream(HTTPRequest(url: target))
            var bytes = 0
            while let chunk = try await response.body.nextChunk() { bytes += chunk.count }
            return .body(bytes)
        } catch {
            return .failure(error.kind)
        }
    }

    @Test func shutdownDuringFiftyRequestsEndsEachOnceAndLeavesNoDescriptors() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        let before = try OpenFileDescriptors.countNotOnDisk()
        let client = try HTTPClient(eventLoopThreads: 1)
        // About 10 s per body: none ends by itself. 8 requests hold the host's connections, 42 wait for one.
        let target = url("http://127.0.0.1:\(peer.port)/slow/200?delay_ms=50")
        // The first 8 hold the connections, their heads in and their bodies to come; then 42 more, which wait.
        var streams: [StreamingResponse] = []
        for _ in 0..<8 { streams.append(try await client.stream(HTTPRequest(url: target))) }
        let outcomes = await withTaskGroup(of: Outcome.self) { group in
            for response in streams {
                group.addTask {
                    do throws(CourierError) {
                        var bytes = 0
                        while let chunk = try await response.body.nextChunk() { bytes += chunk.count }
                        return .body(bytes)
                    } catch {
                        return .failure(error.kind)
                    }
                }
            }
            for index in 0..<42 {
                group.addTask { await Self.run(index, target, on: client) }
            }
            await client.shutdown(gracePeriod: .milliseconds(100))
            var all: [Outcome] = []
            for await outcome in group { all.append(outcome) }
            return all
        }
        #expect(outcomes.count == 50)
        #expect(outcomes.allSatisfy { $0 == .failure(.shutdown) }, "\(outcomes)")
        #expect(client.isShutDown)
        #expect(client.openConnectionCount == 0)
        #expect(try await settledDescriptorCount(atMost: before) <= before)
    }

    @Test func requestsInFlightFinishWithinTheGracePeriod() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        let client = try HTTPClient(eventLoopThreads: 1)
        let target = url("http://127.0.0.1:\(peer.port)/slow/10?delay_ms=20")
        let outcomes = await withTaskGroup(of: Outcome.self) { group in
            for index in 0..<6 {
                group.addTask { await Self.run(index, target, on: client) }
            }
            // The shutdown may start before some requests do: those are refused, the others finish.
            await client.shutdown(gracePeriod: .seconds(60))
            var all: [Outcome] = []
            for await outcome in group { all.append(outcome) }
            return all
        }
        #expect(outcomes.allSatisfy { $0 == .body(10) || $0 == .failure(.shutdown) }, "\(outcomes)")
        #expect(client.openConnectionCount == 0)
    }

    @Test func aStreamedBodyInFlightIsWaitedFor() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        let client = try HTTPClient(eventLoopThreads: 1)
        let response = try await client.stream(HTTPRequest(url: url("http://127.0.0.1:\(peer.port)/slow/10?delay_ms=20")))
        // The head has arrived; the body is still to come when the shutdown starts.
        async let shutdown: Void = client.shutdown(gracePeriod: .seconds(60))
        var bytes = 0
        while let chunk = try await response.body.nextChunk() { bytes += chunk.count }
        await shutdown
        #expect(bytes == 10)
        #expect(client.isShutDown)
    }

    @Test func requestsAfterShutdownFailAtOnceWithTheShutdownKind() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        let client = try HTTPClient(eventLoopThreads: 1)
        #expect(try await client.execute(HTTPRequest(url: url(peer.url("/bytes/10")))).body.count == 10)
        await client.shutdown(gracePeriod: HTTPClient.defaultGracePeriod)
        await client.shutdown(gracePeriod: .zero)
        await expectKind(.shutdown) { _ = try await client.execute(HTTPRequest(url: url(peer.url("/bytes/10")))) }
        await expectKind(.shutdown) { _ = try await client.stream(HTTPRequest(url: url(peer.url("/bytes/10")))) }
        #expect(client.openConnectionCount == 0)
    }

    @Test func aClientOnTheSharedLoopShutsDownWithoutStoppingIt() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        let client = HTTPClient()
        #expect(try await client.execute(HTTPRequest(url: url(peer.url("/bytes/10")))).body.count == 10)
        await client.shutdown(gracePeriod: .zero)
        #expect(client.openConnectionCount == 0)
        // The shared loop still serves other clients.
        let other = HTTPClient()
        defer { other.shutdown() }
        #expect(try await other.execute(HTTPRequest(url: url(peer.url("/bytes/10")))).body.count == 10)
    }
}
