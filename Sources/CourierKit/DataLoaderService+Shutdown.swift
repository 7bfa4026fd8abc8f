internal import CoreMetrics
internal import CourierCore
internal import CourierTransport
internal import Logging

extension DataLoaderService {
    /// The grace period ``shutdown(gracePeriod:)`` gives loads in flight unless told otherwise: 10 seconds, long
    /// enough for an ordinary request to finish and short enough to leave room, within a container's usual 30 s
    /// stop timeout, for the other services of the process.
    public static let defaultGracePeriod: Duration = .seconds(10)

    /// Shuts the service down gracefully and returns when it is closed.
    ///
    /// 1. New loads, from every factory and loader of the service, fail at once with a `shutdown`
    ///    `CourierError`; nothing of them is sent.
    /// 2. Loads in flight may finish (retries, refreshes and streamed bodies included) until `gracePeriod` has
    ///    passed.
    /// 3. Then those still running end at once with a `shutdown` error, delivered as any failure: thrown by
    ///    ``DataLoader/load(_:)`` and by a ``LoadStream``, given to a completion, and to a delegate as its one
    ///    terminal callback (``DataLoaderDelegate/didReceiveErrorResponse(_:error:for:)``, with no response).
    /// 4. The service's own transport (when it made it; a client passed to the initialiser stays the caller's) is
    ///    shut down: every connection is closed and its event-loop thread stopped. A coordination backend's
    ///    heartbeat stops and this instance leaves the fleet's live set.
    ///
    /// Calling it again, or from several tasks at once, is safe: every call returns when the first one's close is
    /// done (the first call's grace period applies). Cancelling the calling task ends the grace period at once.
    public func shutdown(gracePeriod: Duration = DataLoaderService.defaultGracePeriod) async {
        await loads.lifecycle.shutdown(gracePeriod: gracePeriod, isIdle: { loads.isEmpty }) { cancelInFlight in
            if cancelInFlight {
                loads.cancelAll(with: CourierError(.shutdown, "the service shut down before the request finished"))
            }
            if ownsClient { await client.shutdown(gracePeriod: .zero) }
            await fleet?.shutdown()
        }
    }

    /// Whether the service has finished shutting down.
    public var isShutDown: Bool { loads.lifecycle.isClosed }

    /// The transport a service makes for itself: on an event loop of its own, so that shutting the service down
    /// stops a thread that nothing else uses (the process-wide shared loop when one cannot be started), with the
    /// service's logger as its background logger and its metrics factory for the connection gauges.
    static func makeOwnClient(logger: Logger, metricsFactory: any MetricsFactory) -> HTTPClient {
        (try? HTTPClient(eventLoopThreads: 1, backgroundLogger: logger, metricsFactory: metricsFactory))
            ?? HTTPClient(backgroundLogger: logger, metricsFactory: metricsFactory)
    }
}
