import CourierCore
import Synchronization
import Testing

/// A wait that parks until its handler (or a deadline) wakes it, the way every wait on a load's path does: it
/// checks ``CancellationScope/isCancelled`` under the lock its handler takes.
private final class Parking: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Bool, Never>?
        var woken = false
    }

    private let state = Mutex(State())
    let handlerRuns = Atomic<Int>(0)

    /// True when woken by cancellation.
    func park() async -> Bool {
        await CancellationScope.withCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let cancelledAlready = state.withLock { s -> Bool in
                    if s.woken || CancellationScope.isCancelled { return true }
                    s.continuation = continuation
                    return false
                }
                if cancelledAlready { continuation.resume(returning: true) }
            }
        } onCancel: {
            self.handlerRuns.add(1, ordering: .relaxed)
            self.wake()
        }
    }

    func wake() {
        let continuation = state.withLock { s -> CheckedContinuation<Bool, Never>? in
            s.woken = true
            defer { s.continuation = nil }
            return s.continuation
        }
        continuation?.resume(returning: true)
    }
}

@Suite struct CancellationScopeTests {
    @Test func withoutAScopeOnlyTheTaskCounts() async {
        #expect(CancellationScope.current == nil)
        #expect(!CancellationScope.isCancelled)
        let parking = Parking()
        let task = Task { await parking.park() }
        try? await Task.sleep(for: .milliseconds(50))
        task.cancel()
        #expect(await task.value)
        #expect(parking.handlerRuns.load(ordering: .relaxed) == 1)
    }

    @Test func cancellingTheScopeWakesTheWaitButNotTheTask() async {
        let scope = CancellationScope()
        let parking = Parking()
        let waiting = Task {
            await CancellationScope.$current.withValue(scope) {
                let woken = await parking.park()
                return (woken, Task.isCancelled, CancellationScope.isCancelled)
            }
        }
        try? await Task.sleep(for: .milliseconds(50))
        #expect(!scope.isCancelledNow)
        scope.cancel(with: CourierError(.shutdown, "first"))
        scope.cancel(with: CourierError(.cancelled, "second"))
        let (woken, taskCancelled, scopeCancelled) = await waiting.value
        #expect(woken)
        #expect(!taskCancelled, "the scope's cancellation must not cancel the task")
        #expect(scopeCancelled)
        #expect(scope.reason?.kind == .shutdown, "the first reason is kept")
        #expect(parking.handlerRuns.load(ordering: .relaxed) == 1)
    }

    @Test func aWaitUnderACancelledScopeIsRefusedAtOnce() async {
        let scope = CancellationScope()
        scope.cancel(with: CourierError(.cancelled, "before"))
        let parking = Parking()
        let woken = await CancellationScope.$current.withValue(scope) { await parking.park() }
        #expect(woken)
        #expect(parking.handlerRuns.load(ordering: .relaxed) == 1)
    }

    @Test func nestedWaitsAreAllWoken() async {
        let scope = CancellationScope()
        let outer = Parking()
        let inner = Parking()
        let task = Task {
            await CancellationScope.$current.withValue(scope) {
                await CancellationScope.withCancellationHandler {
                    await inner.park()
                } onCancel: {
                    outer.handlerRuns.add(1, ordering: .relaxed)
                }
            }
        }
        try? await Task.sleep(for: .milliseconds(50))
        scope.cancel(with: CourierError(.cancelled, "both"))
        #expect(await task.value)
        #expect(outer.handlerRuns.load(ordering: .relaxed) == 1)
        #expect(inner.handlerRuns.load(ordering: .relaxed) == 1)
    }

    @Test func aFinishedWaitIsNoLongerRegistered() async {
        let scope = CancellationScope()
        let parking = Parking()
        await CancellationScope.$current.withValue(scope) {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { _ = await parking.park() }
                try? await Task.sleep(for: .milliseconds(20))
                parking.wake()
            }
        }
        scope.cancel(with: CourierError(.cancelled, "after"))
        #expect(parking.handlerRuns.load(ordering: .relaxed) == 0, "the handler of a wait that ended ran")
    }

    @Test func theScopesSleepEndsWhenTheScopeIsCancelled() async {
        let scope = CancellationScope()
        let clock = ContinuousClock()
        let start = clock.now
        let sleeping = Task {
            await CancellationScope.$current.withValue(scope) { () async -> Bool in
                do {
                    try await CancellationScope.sleep(until: clock.now + .seconds(30))
                    return false
                } catch {
                    return error is CancellationError
                }
            }
        }
        try? await Task.sleep(for: .milliseconds(50))
        scope.cancel(with: CourierError(.cancelled, "stop"))
        #expect(await sleeping.value)
        #expect(clock.now - start < .seconds(10), "far below the 30 s sleep")

        // Uncancelled, it sleeps its time, in a scope or not.
        let before = clock.now
        try? await CancellationScope.$current.withValue(CancellationScope()) {
            try await CancellationScope.sleep(until: clock.now + .milliseconds(30))
        }
        try? await CancellationScope.sleep(until: clock.now + .milliseconds(30))
        #expect(clock.now - before >= .milliseconds(60))
    }

    @Test func unscopedWorkIgnoresTheScope() async {
        let scope = CancellationScope()
        scope.cancel(with: CourierError(.cancelled, "cancelled"))
        let (inside, outside) = await CancellationScope.$current.withValue(scope) {
            let inside = CancellationScope.isCancelled
            // A task started for shared work inherits the scope unless it leaves it.
            let outside = await Task {
                await CancellationScope.unscoped { (CancellationScope.current == nil, CancellationScope.isCancelled) }
            }.value
            return (inside, outside)
        }
        #expect(inside)
        #expect(outside == (true, false))
    }
}
