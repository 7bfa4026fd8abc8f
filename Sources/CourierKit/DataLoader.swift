public import CourierCore
internal import CourierTransport

/// The data loader a view or view model owns: it loads requests through the policy of its service, for the
/// user of its factory. All its requests in flight are cancelled by ``cancelAll()`` and when it is freed; their
/// callers resume at once with a `cancelled` error.
///
/// Three ways to consume a request, with the same policy behaviour: `await` the whole response with
/// ``load(_:)``, iterate its events with ``stream(_:)``, or get SPTDataLoader-style callbacks with
/// ``load(_:delegate:)`` (or one completion with ``load(_:completion:)``).
public final class DataLoader: Sendable {
    /// The factory (the user) this loader belongs to.
    public let factory: DataLoaderFactory
    private let tracker = LoadTracker()

    init(factory: DataLoaderFactory) {
        self.factory = factory
        factory.service.loads.register(tracker)
    }

    deinit {
        tracker.cancelAll(close: true)
        factory.service.loads.unregister(tracker)
    }

    /// Loads a request and returns its response (any status, after the route's retries).
    ///
    /// The request runs on the caller's task, with no task of its own, on the generic executor (a caller on an
    /// actor, the main actor included, hops off it for the load and back after): from a caller already there, a
    /// fresh cache hit, which never waits, is answered with no thread hop, and a load that waits for the network
    /// costs no extra trip through the executor. ``cancelAll()``, freeing the loader and the service's shutdown
    /// still end it at once without cancelling the caller's task (see `CancellationScope`), as does cancelling
    /// that task.
    ///
    /// - Throws: a `CourierError` when there is no response: offline (`offline`), an invalid URL (`policy`),
    ///   credentials refused over plain http (`policy`), an authoriser failing or timing out (`authorisation`,
    ///   `timeout`), transport failures after the retries (`resolve`, `connect`, `timeout`, `protocol`, …) and
    ///   cancellation (`cancelled`, at once).
    public func load(_ request: Request) async throws(CourierError) -> Response {
        try await tracker.run(execution(request))
    }

    /// Starts a request and calls `completion` exactly once with its result (on a task of the loader's). The
    /// loader is not kept alive by the request: freeing it cancels the request.
    @discardableResult
    public func load(
        _ request: Request, completion: @escaping @Sendable (Result<Response, CourierError>) -> Void
    ) -> LoadHandle {
        let shot = OneShot<Result<Response, CourierError>>()
        let id = tracker.start(execution(request), deliver: shot.resume)
        Task { completion(await shot.wait()) }
        return LoadHandle(id: id, tracker: tracker, request: request)
    }

    /// Starts a request whose head, body chunks and retries are delivered as ``LoadEvent``s as they happen,
    /// with backpressure. See ``LoadStream``.
    public func stream(_ request: Request) -> LoadStream {
        let channel = LoadChannel()
        let id = tracker.start(execution(request, events: channel), deliver: channel.finish)
        return LoadStream(handle: LoadHandle(id: id, tracker: tracker, request: request), channel: channel)
    }

    /// Starts a request whose progress and outcome go to `delegate`, with exactly one terminal callback (see
    /// ``DataLoaderDelegate``). The body is collected into the final response (up to the transport's body
    /// limit) unless ``Request/deliversChunks`` asks for chunks.
    @discardableResult
    public func load(_ request: Request, delegate: any DataLoaderDelegate) -> LoadHandle {
        let channel = LoadChannel()
        let id = tracker.start(execution(request, events: channel), deliver: channel.finish)
        let handle = LoadHandle(id: id, tracker: tracker, request: request)
        let limit = factory.service.maxBodyBytes
        Task {
            await DataLoader.drive(channel, handle: handle, delegate: delegate, bodyLimit: limit)
        }
        return handle
    }

    /// Cancels every request in flight; the loader stays usable for new ones.
    public func cancelAll() {
        tracker.cancelAll(close: false)
    }

    /// Requests in flight.
    public var activeRequests: Int { tracker.count }

    private func execution(_ request: Request, events: LoadChannel? = nil) -> RequestExecution {
        RequestExecution(factory: factory, request: request, queued: factory.service.now(), events: events)
    }

    /// Turns a request's events into delegate callbacks, ending with exactly one terminal callback.
    private static func drive(
        _ channel: LoadChannel, handle: LoadHandle, delegate: any DataLoaderDelegate, bodyLimit: Int
    ) async {
        let chunks = handle.request.deliversChunks
        var body = BoundedBody(limit: bodyLimit)
        do {
            while let event = try await channel.next() {
                switch event {
                case .response(let head):
                    body.reset()
                    delegate.didReceiveInitialResponse(head, for: handle)
                case .chunk(let bytes):
                    if chunks {
                        delegate.didReceiveDataChunk(bytes, for: handle)
                    } else if !body.overflowed {
                        guard body.append(bytes) else {
                            // The outcome is this error (the first one wins), then the request stops.
                            channel.finish(.failure(CourierError(
                                .bodyTooLarge, "the body is larger than \(bodyLimit) bytes", url: handle.request.url
                            )))
                            handle.cancel()
                            continue
                        }
                    }
                case .retrying(let attempt, let reason):
                    body.reset()
                    delegate.willRetry(handle, attempt: attempt, reason: reason)
                case .resuming(let attempt, let offset, let reason):
                    // The body continues: what was collected stays.
                    delegate.didResume(handle, attempt: attempt, from: offset, reason: reason)
                case .finished(var response):
                    if !chunks { response.body = body.bytes }
                    if let error = response.error {
                        delegate.didReceiveErrorResponse(response, error: error, for: handle)
                    } else {
                        delegate.didReceiveSuccessfulResponse(response, for: handle)
                    }
                    return
                }
            }
        } catch {
            if error.kind == .cancelled {
                delegate.didCancel(handle)
            } else {
                delegate.didReceiveErrorResponse(nil, error: error, for: handle)
            }
        }
    }
}
