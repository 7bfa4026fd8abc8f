import CourierCore
import CourierKit
import CourierPosix
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// `DataLoaderService.shutdown(gracePeriod:)` against a slow loopback server (Python's http.server): every load
/// gets exactly one terminal outcome, whichever API started it, and nothing is left open.
@Suite(.timeLimit(.minutes(2))) struct LoaderShutdownTests {
    /// One terminal outcome of a load, as its caller saw it.
    enum Outcome: Equatable {
        case response(status: Int, bodyBytes: Int)
        case failure(CourierError.Kind)
    }

    /// Every terminal outcome per load (by index), and a stream that ticks once per outcome.
    final class Outcomes: Sendable {
        let log = Mutex<[Int: [Outcome]]>([:])
        let ticks = AsyncStream<Void>.makeStream()

        func record(_ index: Int, _ outcome: Outcome) {
            log.withLock { $0[index, default: []].append(outcome) }
            ticks.continuation.yield()
        }

        func record(_ index: Int, _ result: Result<Response, CourierError>) {
            switch result {
            case .success(let response): record(index, .response(status: response.status, bodyBytes: response.body.count))
            case .failure(let error): record(index, .failure(error.kind))
            }
        }

        /// Waits for `count` more outcomes.
        func wait(for count: Int) async {
            var iterator = ticks.stream.makeAsyncIterator()
            for _ in 0..<count { _ = await iterator.next() }
        }
    }

    /// Turns delegate callbacks into outcomes: the three terminal callbacks, each recorded.
    final class TerminalRecorder: DataLoaderDelegate {
        let outcomes: Outcomes
        let index: Int
        init(_ outcomes: Outcomes, index: Int) {
            self.outcomes = outcomes
            self.index = index
        }
        func didReceiveSuccessfulResponse(_ response: Response, for load: LoadHandle) {
            outcomes.record(index, .response(status: response.status, bodyBytes: response.body.count))
        }
        func didReceiveErrorResponse(_ response: Response?, error: CourierError, for load: LoadHandle) {
            outcomes.record(index, .failure(error.kind))
        }
        func didCancel(_ load: LoadHandle) { outcomes.record(index, .failure(.cancelled)) }
    }

    /// Starts load `index` of `url` through one of the four APIs (by `index % 4`), recording its outcome; a
    /// streamed load ticks `heads` when its response head arrives.
    static func start(
        _ index: Int, url: String, loader: DataLoader, outcomes: Outcomes, heads: AsyncStream<Void>.Continuation? = nil
    ) {
        let request = Request(url: url)
        switch index % 4 {
        case 0:
            Task {
                do throws(CourierError) {
                    outcomes.record(index, .success(try await loader.load(request)))
                } catch {
                    outcomes.record(index, .failure(error))
                }
            }
        case 1:
            loader.load(request) { outcomes.record(index, $0) }
        case 2:
            let stream = loader.stream(request)
            Task {
                var bytes = 0
                do throws(CourierError) {
                    for try await event in stream {
                        switch event {
                        case .chunk(let chunk): bytes += chunk.count
                        case .finished(let response): outcomes.record(index, .response(status: response.status, bodyBytes: bytes))
                        case .response: heads?.yield()
                        case .retrying, .resuming: break
                        }
                    }
                } catch {
                    outcomes.record(index, .failure(error.kind))
                }
            }
        default:
            loader.load(request, delegate: TerminalRecorder(outcomes, index: index))
        }
    }

    @Test func shutdownDuringFiftyLoadsEndsEachExactlyOnceAndLeavesNoDescriptors() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        let before = try OpenFileDescriptors.countNotOnDisk()
        let service = try makeService("version: 1\n")
        let loader = service.makeFactory().makeLoader()
        let outcomes = Outcomes()
        let heads = AsyncStream<Void>.makeStream()
        // Each slow body takes about 10 s: none ends by itself during the test. First 8 streamed loads, which take
        // the host's 8 connections; once their heads are in, 42 more through every API, which wait for one.
        let slow = "http://127.0.0.1:\(peer.port)/slow/200?delay_ms=50"
        for index in 0..<8 {
            Self.start(4 * index + 2, url: slow, loader: loader, outcomes: outcomes, heads: heads.continuation)
        }
        var iterator = heads.stream.makeAsyncIterator()
        for _ in 0..<8 { _ = await iterator.next() }
        for index in 0..<50 where index % 4 != 2 || index >= 32 {
            Self.start(index, url: slow, loader: loader, outcomes: outcomes)
        }
        await service.shutdown(gracePeriod: .milliseconds(100))
        await outcomes.wait(for: 50)

        let log = outcomes.log.withLock { $0 }
        #expect(log.count == 50)
        for index in 0..<50 {
            #expect(log[index] == [.failure(.shutdown)], "load \(index)")
        }
        #expect(service.isShutDown)
        #expect(try await settledDescriptorCount(atMost: before) <= before)
    }

    @Test func loadsInFlightFinishWithinTheGracePeriod() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        let service = try makeService("version: 1\n")
        let loader = service.makeFactory().makeLoader()
        let outcomes = Outcomes()
        // About 200 ms each, well within the grace period; through the three APIs that start a load before they
        // return (the fourth, `load(_:)` in a task of the test's, could start after the shutdown).
        for index in 0..<12 where index % 4 != 0 {
            Self.start(index, url: "http://127.0.0.1:\(peer.port)/slow/10?delay_ms=20", loader: loader, outcomes: outcomes)
        }
        await service.shutdown(gracePeriod: .seconds(60))
        // Every load had finished when the shutdown returned; their callers may still be on their way.
        #expect(loader.activeRequests == 0)
        await outcomes.wait(for: 9)
        let log = outcomes.log.withLock { $0 }
        for index in 0..<12 where index % 4 != 0 {
            #expect(log[index] == [.response(status: 200, bodyBytes: 10)], "load \(index)")
        }
    }

    @Test func loadsStartedAfterShutdownFailWithTheShutdownKind() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        let service = try makeService("version: 1\n")
        let loader = service.makeFactory().makeLoader()
        await service.shutdown()
        let outcomes = Outcomes()
        for index in 0..<4 {
            Self.start(index, url: "http://127.0.0.1:\(peer.port)/bytes/10", loader: loader, outcomes: outcomes)
        }
        await outcomes.wait(for: 4)
        #expect(outcomes.log.withLock { $0 } == [0: [.failure(.shutdown)], 1: [.failure(.shutdown)], 2: [.failure(.shutdown)], 3: [.failure(.shutdown)]])
        // A loader made after the shutdown is refused too.
        do {
            _ = try await service.makeFactory().makeLoader().load(Request(url: "http://127.0.0.1:\(peer.port)/bytes/10"))
            Issue.record("a load after shutdown succeeded")
        } catch {
            #expect(error.kind == .shutdown)
        }
    }

    @Test func concurrentAndRepeatedShutdownsAllReturnOnceClosed() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        let service = try makeService("version: 1\n")
        let loader = service.makeFactory().makeLoader()
        let outcomes = Outcomes()
        for index in 0..<4 {
            Self.start(index, url: "http://127.0.0.1:\(peer.port)/slow/200?delay_ms=50", loader: loader, outcomes: outcomes)
        }
        await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    await service.shutdown(gracePeriod: .milliseconds(50))
                    return service.isShutDown
                }
            }
            for await closed in group { #expect(closed) }
        }
        await service.shutdown()
        await outcomes.wait(for: 4)
        #expect(outcomes.log.withLock { $0 }.values.allSatisfy { $0 == [.failure(.shutdown)] })
    }

    @Test func cancellingTheShutdownCallerEndsTheGracePeriodAtOnce() async throws {
        let peer = try await PythonPeer.start()
        defer { peer.stop() }
        let service = try makeService("version: 1\n")
        let loader = service.makeFactory().makeLoader()
        let outcomes = Outcomes()
        Self.start(0, url: "http://127.0.0.1:\(peer.port)/slow/200?delay_ms=50", loader: loader, outcomes: outcomes)
        // An hour's grace, cut short by cancelling the caller (as a service group does when it stops hard).
        let shutdown = Task { await service.shutdown(gracePeriod: .seconds(3600)) }
        shutdown.cancel()
        await shutdown.value
        #expect(service.isShutDown)
        await outcomes.wait(for: 1)
        #expect(outcomes.log.withLock { $0 } == [0: [.failure(.shutdown)]])
    }
}
