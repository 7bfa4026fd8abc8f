internal import CourierCore
internal import CourierTransport

/// Sends one request's ``LoaderEvent``s to the trace observers that were registered when it started, and to the
/// request's ``RequestInstrumentation`` (logs, metrics, spans) when the service has one; costs nothing when there
/// are neither.
struct LoaderTracer: Sendable {
    let request: UInt64
    let url: String
    private let observers: [@Sendable (LoaderEvent) -> Void]
    /// The service's clock, which dates the events.
    private let clock: LoaderClock
    private let instrumentation: RequestInstrumentation?

    init(
        request: UInt64, url: String, observers: [@Sendable (LoaderEvent) -> Void], clock: LoaderClock = .system,
        instrumentation: RequestInstrumentation? = nil
    ) {
        self.request = request
        self.url = url
        self.observers = observers
        self.clock = clock
        self.instrumentation = instrumentation
    }

    @inline(__always)
    func callAsFunction(_ attempt: Int, _ kind: @autoclosure () -> LoaderEvent.Kind) {
        // Inlined, so that an event nobody listens to costs one test at its call site: out of line, each call
        // site's autoclosure context is allocated (from the task's allocator, in an async caller) before the call.
        guard !observers.isEmpty || instrumentation != nil else { return }
        emit(attempt, kind())
    }

    /// An event with words that its kind cannot carry (`cache miss` after a corrupt record was removed).
    @inline(never)
    func callAsFunction(_ attempt: Int, _ kind: LoaderEvent.Kind, detail: String) {
        guard !observers.isEmpty else {
            instrumentation?.handle(attempt, kind)
            return
        }
        var event = LoaderEvent(request: request, url: url, attempt: attempt, at: clock.now().instant, kind: kind)
        event.detail = detail
        for observer in observers { observer(event) }
        instrumentation?.handle(event)
    }

    @inline(never)
    private func emit(_ attempt: Int, _ kind: LoaderEvent.Kind) {
        // The instrumentation alone needs no `LoaderEvent`, nor the clock for most events.
        guard !observers.isEmpty else {
            instrumentation?.handle(attempt, kind)
            return
        }
        let event = LoaderEvent(request: request, url: url, attempt: attempt, at: clock.now().instant, kind: kind)
        for observer in observers { observer(event) }
        instrumentation?.handle(event)
    }

    /// The request starts on `route` (its first hop's), for `url` (its URL, parsed).
    func started(_ method: HTTPMethod, _ route: Route, _ url: HTTPURL) {
        instrumentation?.routed(route, url: url)
        self(0, .started(method: method, service: route.serviceName))
    }

    /// Adds the trace context to an attempt about to go on `route`, where the route allows it
    /// (``Route/propagatesTraceContext``); without instrumentation the request is left as it is (not copied).
    func decorate(_ outgoing: inout HTTPRequest, route: Route) {
        guard let instrumentation else { return }
        outgoing.headers = instrumentation.outgoing(outgoing.headers, url: outgoing.url, route: route)
    }

    /// The current attempt failed without a response, or its streamed body broke off.
    func attemptFailed(_ error: CourierError) {
        instrumentation?.attemptFailed(error)
    }

    /// The request's time to first byte (nil without a response) and wire figures, just before its `finished`
    /// event.
    func completed(firstByte: Duration?, bytesSent: Int64, bytesReceived: Int64) {
        instrumentation?.completed(firstByte: firstByte, bytesSent: bytesSent, bytesReceived: bytesReceived)
    }
}
