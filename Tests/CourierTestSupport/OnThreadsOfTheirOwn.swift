public import Testing

/// Runs each test of a suite (and its child tasks) on threads of a ``ThreadExecutor`` instead of Swift's cooperative
/// pool.
public struct OnThreadsOfTheirOwn: TestTrait, SuiteTrait, TestScoping {
    let executor: ThreadExecutor

    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(executor) { try await function() }
    }
}

extension Trait where Self == OnThreadsOfTheirOwn {
    /// Runs the tests on ``ThreadExecutor/shared``, at the lowest priority: for suites that create files in bulk
    /// or compute for seconds (see ``ThreadExecutor``).
    public static var onThreadsOfTheirOwn: Self { Self(executor: .shared) }

    /// Runs the tests on ``ThreadExecutor/blocking``, at the normal priority: for suites that spawn children and
    /// create and remove their files in blocking calls (the command-line tool's tests).
    public static var onBlockingThreads: Self { Self(executor: .blocking) }
}
