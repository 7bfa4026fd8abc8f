import CourierCore

/// The data loader a view or view model owns: it loads requests through the policy of its service, for the
/// user of its factory. All its requests in flight are cancelled by ``cancelAll()`` and when it is freed; their
/// callers resume at once with a `cancelled` error.
public final class DataLoader: Sendable {
    /// The factory (the user) this loader belongs to.
    public let factory: DataLoaderFactory
    private let tracker = LoadTracker()

    init(factory: DataLoaderFactory) {
        self.factory = factory
    }

    deinit {
        tracker.cancelAll(close: true)
    }

    /// Loads a request and returns its response (any status, after the route's retries).
    ///
    /// - Throws: a ``CourierError`` when there is no response: offline (`policy`), an invalid URL (`policy`),
    ///   credentials refused over plain http (`policy`), an authoriser failing or timing out (`authorisation`,
    ///   `timeout`), transport failures after the retries (`resolve`, `connect`, `timeout`, `protocol`, …) and
    ///   cancellation (`cancelled`, at once).
    public func load(_ request: Request) async throws(CourierError) -> Response {
        let tracker = self.tracker
        let (id, shot) = tracker.start(RequestExecution(factory: factory, request: request, queued: .now))
        return try await withTaskCancellationHandler {
            await shot.wait()
        } onCancel: {
            tracker.cancel(id)
        }.get()
    }

    /// Starts a request and calls `completion` exactly once with its result (on a task of the loader's). The
    /// loader is not kept alive by the request: freeing it cancels the request.
    @discardableResult
    public func load(
        _ request: Request, completion: @escaping @Sendable (Result<Response, CourierError>) -> Void
    ) -> LoadHandle {
        let (id, shot) = tracker.start(RequestExecution(factory: factory, request: request, queued: .now))
        Task { completion(await shot.wait()) }
        return LoadHandle(id: id, tracker: tracker)
    }

    /// Cancels every request in flight; the loader stays usable for new ones.
    public func cancelAll() {
        tracker.cancelAll(close: false)
    }

    /// Requests in flight.
    public var activeRequests: Int { tracker.count }
}
