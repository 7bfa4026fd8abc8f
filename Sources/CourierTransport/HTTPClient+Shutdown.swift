public import CoreMetrics
public import CourierCore
internal import CourierPosix
public import Logging
internal import Synchronization

extension HTTPClient {
    /// Makes a client with event loops of its own (`eventLoopThreads` threads), which it stops when it shuts
    /// down (``shutdown(gracePeriod:)``) or is freed.
    ///
    /// - Throws: ``CourierError`` of kind `system` when a loop's epoll, eventfd or thread cannot be created.
    ///
    /// `backgroundLogger` and `metricsFactory` are as for ``init(configuration:backgroundLogger:metricsFactory:)``.
    public convenience init(
        configuration: HTTPClientConfiguration = HTTPClientConfiguration(), eventLoopThreads: Int,
        backgroundLogger: Logger = HTTPClient.loggingDisabled,
        metricsFactory: any MetricsFactory = NOOPMetricsHandler.instance
    ) throws(CourierError) {
        let loops: EventLoopGroup
        do {
            loops = try EventLoopGroup(threads: eventLoopThreads, namePrefix: "courier-client")
        } catch {
            throw CourierError(.system, "could not start the client's event loops (\(error))", cause: error)
        }
        self.init(
            configuration: configuration, loops: loops, owningLoops: true, resolver: .shared,
            backgroundLogger: backgroundLogger, metricsFactory: metricsFactory
        )
    }

    /// The grace period ``shutdown(gracePeriod:)`` gives requests in flight unless told otherwise: 10 seconds,
    /// long enough for an ordinary request to finish and short enough to leave room, within a container's usual
    /// 30 s stop timeout, for the other services of the process.
    public static let defaultGracePeriod: Duration = .seconds(10)

    /// Shuts the client down gracefully and returns when it is closed.
    ///
    /// 1. New requests fail at once with a `shutdown` ``CourierError``; nothing of them is sent.
    /// 2. Requests in flight (streamed bodies included) may finish until `gracePeriod` has passed.
    /// 3. Then every connection is closed: a request still running fails with `shutdown` (exactly once, as any
    ///    failure), and waiting ones too.
    /// 4. When the client made its own loops (``init(configuration:eventLoopThreads:resolver:backgroundLogger:metricsFactory:)``), their threads
    ///    are stopped and joined; a shared group (``EventLoopGroup/shared``, or one passed in) is left running.
    ///
    /// Calling it again, or from several tasks at once, is safe: every call returns when the first one's close is
    /// done (the first call's grace period applies). Cancelling the calling task ends the grace period at once.
    /// It must not be called from a task running on one of the client's own loops.
    ///
    /// The grace period has no default here (``defaultGracePeriod`` is the usual choice), so that the synchronous
    /// ``shutdown()`` existing code calls, in async functions too, keeps its meaning.
    public func shutdown(gracePeriod: Duration) async {
        await lifecycle.shutdown(gracePeriod: gracePeriod, isIdle: { checkDrained(); return false }) { _ in
            pool.closeAll()
            if ownsLoops { await loops.shutdownGracefully() }
        }
    }

    /// Whether the client has finished shutting down.
    public var isShutDown: Bool { lifecycle.isClosed }

    // MARK: - Counting requests in flight

    /// Counts a request in flight, or refuses it once the client is shutting down. Counting comes first, so a
    /// shutdown either sees the request or the request sees the shutdown.
    @inline(__always)
    func enter(_ request: HTTPRequest) throws(CourierError) {
        exchanges.wrappingAdd(1, ordering: .sequentiallyConsistent)
        guard lifecycle.isAcceptingRequests else {
            leave()
            throw CourierError(.shutdown, "the client is shutting down: the request was not sent", url: request.url.description)
        }
    }

    @inline(__always)
    func leave() {
        let left = exchanges.wrappingSubtract(1, ordering: .sequentiallyConsistent).newValue
        if left == 0 && !lifecycle.isAcceptingRequests { checkDrained() }
    }

    /// While shutting down: with no exchange running, the client has drained once the pool has no connection in
    /// use (streamed bodies), none being made and no request waiting.
    private func checkDrained() {
        guard exchanges.load(ordering: .sequentiallyConsistent) == 0 else { return }
        pool.notifyWhenQuiet { [lifecycle] in lifecycle.drained() }
    }

    /// Stops loops the client owns when it is freed without ``shutdown(gracePeriod:)``: the threads are joined on
    /// a helper thread, so that freeing a client neither blocks a thread of Swift's small cooperative pool nor
    /// deadlocks when it happens on one of those loops.
    static func stop(_ loops: EventLoopGroup) {
        Task.detached { await loops.shutdownGracefully() }
    }
}
