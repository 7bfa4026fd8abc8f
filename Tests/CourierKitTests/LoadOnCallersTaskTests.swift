import CourierCore
import CourierKit
import CourierTestSupport
import Synchronization
import Testing

/// `load(_:) async` runs on its caller's task under a `CancellationScope`: these check that it does, and that
/// every kind of wait on its path still ends at once when the loader cancels it, without cancelling the caller.
@Suite struct LoadOnCallersTaskTests {
    /// What a caller saw of its load: the error's kind and whether its own task was cancelled afterwards.
    struct Outcome: Sendable {
        var kind: CourierError.Kind?
        var callerCancelled: Bool
        var seconds: Double
    }

    /// One service claiming 127.0.0.1, with the default policy.
    static let plainPolicy = """
        version: 1
        services:
          api:
            hosts: [127.0.0.1]
        """

    /// Starts loading `url` on a caller's task, lets it reach its wait, ends it with `end`, and reports.
    private func endWhileWaiting(_ loader: DataLoader, _ url: String, end: () -> Void) async throws -> Outcome {
        let caller = Task { () -> (CourierError.Kind?, Bool, ContinuousClock.Instant) in
            var kind: CourierError.Kind?
            do throws(CourierError) { _ = try await loader.load(Request(url: url)) } catch { kind = error.kind }
            return (kind, Task.isCancelled, ContinuousClock.now)
        }
        try await Task.sleep(for: .milliseconds(300))
        let start = ContinuousClock.now
        end()
        let (kind, cancelled, ended) = await caller.value
        return Outcome(kind: kind, callerCancelled: cancelled, seconds: (ended - start).seconds)
    }

    /// The load ended with `kind` within 4 s (far below the 10 s or more it would have waited), and its caller's
    /// own task was not cancelled.
    private func expectEndedAtOnce(_ outcome: Outcome, as kind: CourierError.Kind, sourceLocation: Testing.SourceLocation = #_sourceLocation) {
        #expect(outcome.kind == kind, sourceLocation: sourceLocation)
        #expect(!outcome.callerCancelled, "the caller's own task was cancelled", sourceLocation: sourceLocation)
        #expect(outcome.seconds < 4, sourceLocation: sourceLocation)
    }

    @Test func theLoadRunsOnTheCallersTask() async throws {
        let server = try RecordingServer()
        let service = try makeService(Self.plainPolicy)
        // Trace observers run on the request's task.
        let observed = Mutex<Set<Int>>([])
        service.addTraceObserver { _ in
            let id = withUnsafeCurrentTask { $0?.hashValue }
            if let id { observed.withLock { _ = $0.insert(id) } }
        }
        let loader = service.makeFactory().makeLoader()
        let caller = withUnsafeCurrentTask { $0?.hashValue }
        #expect(try await loader.load(Request(url: server.url("/x"))).status == 200)
        #expect(caller != nil)
        #expect(observed.withLock { $0 } == [caller!], "the load's events came from another task")
    }

    @Test func cancelAllEndsTheNetworkWaitButNotTheCallersTask() async throws {
        let server = try RecordingServer { _, _ in RecordingServer.Reply(status: 200, delay: .seconds(10)) }
        let service = try makeService(Self.plainPolicy)
        let loader = service.makeFactory().makeLoader()
        let url = server.url("/slow")
        let outcome = try await endWhileWaiting(loader, url, end: { loader.cancelAll() })
        expectEndedAtOnce(outcome, as: .cancelled)
        #expect(loader.activeRequests == 0)
        // The loader stays usable, and so does the connection pool.
        let quick = try RecordingServer()
        #expect(try await loader.load(Request(url: quick.url("/after"))).status == 200)
    }

    @Test func cancelAllEndsARateLimitWaitAndABackOff() async throws {
        let server = try RecordingServer { _, request in
            request.requestLine.contains("/busy") ? RecordingServer.Reply(status: 503) : RecordingServer.Reply(status: 200)
        }
        let service = try makeService("""
            version: 1
            services:
              api:
                hosts: [127.0.0.1]
                timeouts: { total: 120s }
                rate-limit: { requests-per-second: 0.02, burst: 1 }
              busy:
                hosts: [localhost]
                timeouts: { total: 120s }
                retry: { max-attempts: 3, on: [503], backoff: { initial: 50s, max: 60s, jitter: none } }
            """)
        let loader = service.makeFactory().makeLoader()
        // The first request takes the bucket's one token; the second waits 50 s for the next.
        let limited = server.url("/limited")
        #expect(try await loader.load(Request(url: limited)).status == 200)
        var outcome = try await endWhileWaiting(loader, limited, end: { loader.cancelAll() })
        expectEndedAtOnce(outcome, as: .cancelled)
        #expect(server.requests.filter { $0.requestLine.contains("/limited") }.count == 1, "the rate-limited request was sent")

        // A 503, then a 50 s back-off before the second attempt.
        let busy = "http://localhost:\(server.port)/busy"
        outcome = try await endWhileWaiting(loader, busy, end: { loader.cancelAll() })
        expectEndedAtOnce(outcome, as: .cancelled)
        #expect(server.requests.filter { $0.requestLine.contains("/busy") }.count == 1)
    }

    @Test func aShutdownEndsAnInlineLoadWithItsOwnError() async throws {
        let server = try RecordingServer { _, _ in RecordingServer.Reply(status: 200, delay: .seconds(10)) }
        let service = try makeService(Self.plainPolicy)
        let loader = service.makeFactory().makeLoader()
        let url = server.url("/slow")
        let outcome = try await endWhileWaiting(loader, url, end: {
            Task { await service.shutdown(gracePeriod: .milliseconds(100)) }
        })
        expectEndedAtOnce(outcome, as: .shutdown)
    }

    @Test func aLoadAskedForInACancelledTaskSendsNothing() async throws {
        let server = try RecordingServer()
        let service = try makeService(Self.plainPolicy)
        let loader = service.makeFactory().makeLoader()
        let url = server.url("/never")
        let task = Task { () -> CourierError.Kind? in
            withUnsafeCurrentTask { $0?.cancel() }
            do throws(CourierError) {
                _ = try await loader.load(Request(url: url))
                return nil
            } catch {
                return error.kind
            }
        }
        #expect(await task.value == .cancelled)
        try await Task.sleep(for: .milliseconds(100))
        #expect(server.requests.isEmpty)
        #expect(loader.activeRequests == 0)
    }
}
