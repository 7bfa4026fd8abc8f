internal import CourierCore
internal import Logging
internal import Synchronization
internal import Tracing

/// One request's log lines, metrics and spans, all derived from the ``LoaderEvent``s its ``LoaderTracer`` reports
/// (and, at the end, the request's wire figures): the loader itself makes no logging, metrics or tracing call.
///
/// - Logs: `trace` for progress (start, connect target, response head), `debug` for the loader's decisions
///   (rate-limit wait, Retry-After, fallback, refresh, retry, give-up) and the end. Never a header, a body or a
///   credential: URLs go through ``TelemetryURL``, and failures are named by their kind, not their message
///   (which may quote the URL as given).
/// - Metrics: the ``LoaderMetrics`` names.
/// - Spans: a client span for the load (named after the method) with a child client span per attempt, after the
///   OpenTelemetry HTTP client conventions; rate-limit waits, back-off, Retry-After, fallbacks and refreshes are
///   events on the load span. The attempt span's context is what is injected into the request, where the route
///   allows it. Each span gets its attributes once, whole, when it ends.
///
/// Events of one request arrive in order from one task; the lock only makes the type `Sendable`.
final class RequestInstrumentation: Sendable {
    private let number: UInt64
    private let url: String
    /// `url.full` for the URL as given (before any authoriser), computed once when a span or a log line needs it.
    private let plainFullURL: String
    private let method: HTTPMethod
    private let metrics: LoaderMetrics?
    private let tracer: (any Tracer)?
    /// The service's clock, which the events without an instant of their own are dated on.
    private let clock: LoaderClock
    private let state: Mutex<State>

    /// An attempt's outcome: a status code or a failure's kind.
    private enum Outcome: CustomStringConvertible {
        case status(Int)
        case failure(CourierError.Kind)

        var description: String {
            switch self {
            case .status(let code): "\(code)"
            case .failure(let kind): "\(kind)"
            }
        }
    }

    private struct State {
        var service = LoaderInstruments.unclaimed
        var endpoint = LoaderInstruments.unclaimed
        /// nil when the logger's level is above `debug`.
        var logger: Logger?
        var load: (any Span)?
        var attempt: (any Span)?
        /// The spans' attributes, kept here and handed to each span once, whole, when it ends: a tracer's
        /// `attributes` getter copies them (under a lock, for `InMemoryTracer`), and each hand-over is a locked
        /// update in the tracer that would leave the dictionary here shared, so that the next change copied it.
        /// Exporters read a span's attributes when it ends; the tracing API gives a sampler none at its start.
        /// `loadAttributes` is empty until the request is routed (or coalesced); one never routed is described at
        /// its end.
        var loadAttributes: [String: SpanAttribute] = [:]
        var attemptAttributes: [String: SpanAttribute] = [:]
        /// The first hop's URL, as the loader parsed it (nil until routed).
        var original: HTTPURL?
        /// The last attempt's outcome (the reason a retry is counted under), kept unformatted: most requests
        /// never need it as text.
        var outcome: Outcome?
        /// Requests sent so far (attempts, fallback targets and redirect hops alike): OpenTelemetry's resends.
        var sends = 0
        /// Query item names an authoriser added or changed (lower-cased): redacted from every `url.full`.
        var secretNames: Set<String> = []
        var started = Deadline.now()
        var firstByte: Duration?
        var bytesSent: Int64 = 0
        var bytesReceived: Int64 = 0

        /// The `service` and `endpoint` dimensions (read in place: a function taking the whole state would copy it).
        var routeDimensions: [(String, String)] { [("service", service), ("endpoint", endpoint)] }
    }

    init(
        number: UInt64, url: String, method: HTTPMethod, logger: Logger?, metrics: LoaderMetrics?, tracer: (any Tracer)?,
        parent: InstrumentationContext?, clock: LoaderClock = .system
    ) {
        self.number = number
        self.clock = clock
        self.url = url
        self.plainFullURL = tracer != nil || logger != nil ? TelemetryURL.full(url) : ""
        self.method = method
        self.metrics = metrics
        self.tracer = tracer
        // Made by a function, so that the state moves into the lock rather than being copied from a local.
        state = Mutex(Self.initialState(number: number, method: method, logger: logger, tracer: tracer, parent: parent))
    }

    private static func initialState(
        number: UInt64, method: HTTPMethod, logger: Logger?, tracer: (any Tracer)?, parent: InstrumentationContext?
    ) -> State {
        var initial = State()
        if var logger {
            logger[metadataKey: "courier.request"] = "\(number)"
            initial.logger = logger
        }
        if let tracer, let parent {
            // Its attributes come with the route, and reach it when it ends.
            initial.load = tracer.startSpan(method.rawValue, context: parent, ofKind: .client)
        }
        return initial
    }

    // MARK: - Fed by LoaderTracer

    /// The request's (first hop's) route and parsed URL: the service and endpoint key its metrics and log lines
    /// are under.
    func routed(_ route: Route, url parsed: HTTPURL) {
        state.withLock { s in
            s.original = parsed
            if let service = route.serviceName {
                s.service = service
                s.endpoint = route.endpointKey.description
                s.logger?[metadataKey: "courier.service"] = "\(s.service)"
                s.logger?[metadataKey: "courier.endpoint"] = "\(s.endpoint)"
            }
            guard s.load != nil else { return }
            var attributes = describe(parsed, extra: 4)
            if route.serviceName != nil {
                attributes["courier.service"] = .string(s.service)
                attributes["courier.endpoint"] = .string(s.endpoint)
            }
            s.loadAttributes = attributes
        }
    }

    /// The header fields of the attempt about to be sent to `url` (the authorised URL): the attempt span's trace
    /// context is added when `route` allows it.
    func outgoing(_ headers: HTTPHeaders, url sent: HTTPURL, route: Route) -> HTTPHeaders {
        state.withLock { s in
            if route.authoriser != nil {
                s.secretNames.formUnion(TelemetryURL.addedNames(sent: sent.query, original: s.original?.query))
            }
            guard let attempt = s.attempt else { return headers }
            // The attempt span starts with the URL as given: only a URL the authoriser changed (or a hop's) differs.
            if !Self.same(sent, s.original) {
                s.attemptAttributes["url.full"] = .string(TelemetryURL.full(sent.description, redacting: s.secretNames))
                s.attemptAttributes["server.address"] = .string(sent.host)
                s.attemptAttributes["server.port"] = .int64(Int64(sent.port))
            }
            guard route.propagatesTraceContext, let tracer else { return headers }
            var injected = headers
            tracer.inject(attempt.context, into: &injected, using: HTTPHeadersInjector())
            return injected
        }
    }

    /// An attempt failed without a response (or its streamed body broke off).
    func attemptFailed(_ error: CourierError) {
        state.withLock { s in
            s.outcome = .failure(error.kind)
            fail(&s, type: "\(error.kind)")
        }
    }

    /// The request's end: its response's time to first byte, and the bytes of every attempt.
    func completed(firstByte: Duration?, bytesSent: Int64, bytesReceived: Int64) {
        state.withLock { s in
            s.firstByte = firstByte
            s.bytesSent = bytesSent
            s.bytesReceived = bytesReceived
        }
    }

    /// An event of the request's, as its ``LoaderEvent`` would carry it: `at` is when it happened (nil: now, read
    /// only where it is needed). No `LoaderEvent` is made unless a log line quotes one.
    func handle(_ attempt: Int, _ kind: LoaderEvent.Kind, at: Deadline? = nil) {
        let event = Event(url: url, attempt: attempt, kind: kind, at: at, clock: clock)
        state.withLock { s in handle(event, &s) }
    }

    /// `event`, when a trace observer has made it already.
    func handle(_ event: LoaderEvent) {
        handle(event.attempt, event.kind, at: Deadline(event.at))
    }

    /// What `handle` derives from: a ``LoaderEvent``'s fields, its instant read only on demand.
    private struct Event {
        let url: String
        let attempt: Int
        let kind: LoaderEvent.Kind
        let at: Deadline?
        let clock: LoaderClock

        var instant: Deadline { at ?? clock.now() }
        var summary: String { LoaderEvent.summary(of: kind, url: url) }
    }

    // MARK: - Deriving

    private func handle(_ event: Event, _ s: inout State) {
        switch event.kind {
        case .started:
            s.started = event.instant
            log(s.logger, .trace, "load started", event, ["url.full": "\(plainFullURL)", "http.request.method": "\(method)"])

        case .rateLimited(_, let wait):
            log(s.logger, .debug, event.summary, event, ["courier.wait": "\(wait)"])
            metrics?.time(LoaderMetrics.rateLimitWait, s.routeDimensions, wait)
            s.load?.addEvent(SpanEvent(name: "rate-limit-wait", attributes: ["courier.wait_ms": Self.milliseconds(wait)]))

        case .authorising, .coalesced:
            log(s.logger, .trace, event.summary, event)
            if case .coalesced = event.kind, s.load != nil {
                // A follower is never routed: it describes its span itself.
                var attributes = describe(HTTPURL(url), extra: 4)
                attributes["courier.coalesced"] = .bool(true)
                s.loadAttributes = attributes
            }

        case .connecting(let target, let fallback):
            endAttempt(&s)
            log(s.logger, fallback ? .debug : .trace, event.summary, event, ["courier.target": "\(target)"])
            if fallback {
                metrics?.count(LoaderMetrics.fallbacks, s.routeDimensions)
                s.load?.addEvent(SpanEvent(name: "fallback", attributes: ["courier.target": .string(target)]))
            }
            startAttempt(event.attempt, target: target, fallback: fallback, &s)

        case .coolingDown(let target):
            log(s.logger, .debug, event.summary, event, ["courier.target": "\(target)"])

        case .unreachable(let target, let error):
            log(s.logger, .debug, "\(target) is unreachable (\(error.kind))", event, ["courier.target": "\(target)", "error.type": "\(error.kind)"])
            s.outcome = .failure(error.kind)
            fail(&s, type: "\(error.kind)")
            endAttempt(&s)

        case .response(let status):
            log(s.logger, .trace, event.summary, event, ["http.response.status_code": "\(status)"])
            s.outcome = .status(status)
            if s.attempt != nil {
                s.attemptAttributes["http.response.status_code"] = .int64(Int64(status))
                if status >= 400 { fail(&s, type: "\(status)") }
            }

        case .retryAfter(let requested, let applied, _):
            log(s.logger, .debug, event.summary, event, ["courier.wait": "\(applied)"])
            if applied > .zero { metrics?.count(LoaderMetrics.retryAfterPauses, s.routeDimensions) }
            s.load?.addEvent(SpanEvent(name: "retry-after", attributes: [
                "courier.requested_ms": Self.milliseconds(requested), "courier.applied_ms": Self.milliseconds(applied),
            ]))

        case .refreshing(let authoriser, let role):
            endAttempt(&s)
            log(s.logger, .debug, event.summary, event, ["courier.authoriser": "\(authoriser)"])
            let roleName = Self.name(role)
            metrics?.count(LoaderMetrics.tokenRefreshes, [("service", s.service), ("authoriser", authoriser), ("role", roleName)])
            s.load?.addEvent(SpanEvent(name: "credentials-refresh", attributes: ["courier.authoriser": .string(authoriser), "courier.role": .string(roleName)]))

        case .retrying(_, let delay):
            endAttempt(&s)
            let reason = s.outcome.map(\.description) ?? "other"
            log(s.logger, .debug, "retrying in \(LoaderEvent.short(delay)) after \(reason)", event, ["courier.delay": "\(delay)", "courier.reason": "\(reason)"])
            metrics?.count(LoaderMetrics.retries, s.routeDimensions + [("reason", reason)])
            s.load?.addEvent(SpanEvent(name: "backoff", attributes: ["courier.delay_ms": Self.milliseconds(delay), "courier.reason": .string(reason)]))

        case .givingUp(_, let why):
            endAttempt(&s)
            log(s.logger, .debug, "not retrying \(s.outcome.map(\.description) ?? "the failure"): \(why)", event)

        case .finished(let status, let error):
            endAttempt(&s)
            finish(event, status: status, error: error, &s)

        case .cache(let cacheEvent):
            if case .failed(let error) = cacheEvent {
                log(s.logger, .debug, "cache unavailable (\(error.kind)); going on without it", event)
            } else {
                log(s.logger, .debug, event.summary, event)
            }
            let label: String?
            switch cacheEvent {
            case .hit: label = LoaderMetrics.cacheHits
            case .stale: label = LoaderMetrics.cacheStaleHits
            case .miss: label = LoaderMetrics.cacheMisses
            case .revalidating: label = LoaderMetrics.cacheRevalidations
            case .revalidated, .stored, .notStored, .invalidated, .failed: label = nil
            }
            if let label { metrics?.count(label, [("service", s.service)]) }
            s.load?.addEvent(SpanEvent(name: "cache", attributes: ["courier.cache": .string(Self.name(cacheEvent))]))

        case .coordination(let coordinationEvent):
            switch coordinationEvent {
            case .fleetWait(_, let wait):
                log(s.logger, .debug, event.summary, event, ["courier.wait": "\(wait)"])
                metrics?.time(LoaderMetrics.fleetWait, s.routeDimensions, wait)
                s.load?.addEvent(SpanEvent(name: "fleet-wait", attributes: ["courier.wait_ms": Self.milliseconds(wait)]))
            case .unavailable(let backend, let mode):
                log(s.logger, .debug, event.summary, event, ["courier.backend": "\(backend)", "courier.on_unavailable": "\(mode)"])
                metrics?.count(LoaderMetrics.coordinationUnavailable, s.routeDimensions + [("on_unavailable", mode)])
                s.load?.addEvent(SpanEvent(name: "coordination-unavailable", attributes: [
                    "courier.backend": .string(backend), "courier.on_unavailable": .string(mode),
                ]))
            case .pauseShared(_, let duration):
                log(s.logger, .debug, event.summary, event, ["courier.wait": "\(duration)"])
                metrics?.count(LoaderMetrics.fleetPauses, s.routeDimensions)
                s.load?.addEvent(SpanEvent(name: "fleet-pause", attributes: ["courier.pause_ms": Self.milliseconds(duration)]))
            case .sharedToken(let name, let decision):
                // Counted where the store decides (courier_shared_tokens, FleetLink), once per decision, not per load.
                log(s.logger, .debug, event.summary, event, ["courier.authoriser": "\(name)", "courier.shared_token": "\(decision.rawValue)"])
                s.load?.addEvent(SpanEvent(name: "shared-token", attributes: [
                    "courier.authoriser": .string(name), "courier.shared_token": .string(decision.rawValue),
                ]))
            }
        }
    }

    private func finish(_ event: Event, status: Int?, error: CourierError?, _ s: inout State) {
        let statusClass = LoaderMetrics.statusClass(status)
        log(s.logger, .debug, error.map { "load failed: \($0.kind)" } ?? "load finished: status \(status ?? 0)", event, {
            var metadata: Logger.Metadata = ["courier.attempts": "\(event.attempt)"]
            if let status { metadata["http.response.status_code"] = "\(status)" }
            if let error { metadata["error.type"] = "\(error.kind)" }
            return metadata
        }())
        metrics?.finished(
            service: s.service, endpoint: s.endpoint, method: method.rawValue, statusClass: statusClass,
            attempts: event.attempt, duration: event.instant - s.started, firstByte: s.firstByte, bytesSent: s.bytesSent,
            bytesReceived: s.bytesReceived
        )
        guard let load = s.load else { return }
        if s.loadAttributes.isEmpty { s.loadAttributes = describe(HTTPURL(url), extra: 4) }
        let errorType = error.map { "\($0.kind)" } ?? status.flatMap { $0 >= 400 ? "\($0)" : nil }
        // Taken out of the state, which needs them no more: added to below without a copy of the dictionary.
        var attributes = s.loadAttributes
        s.loadAttributes = [:]
        if !s.secretNames.isEmpty { attributes["url.full"] = .string(TelemetryURL.full(url, redacting: s.secretNames)) }
        if s.sends > 1 { attributes["http.request.resend_count"] = .int64(Int64(s.sends - 1)) }
        if let status { attributes["http.response.status_code"] = .int64(Int64(status)) }
        if let errorType { attributes["error.type"] = .string(errorType) }
        // The span's only hand-over: every attribute, in one assignment.
        load.attributes = SpanAttributes(attributes)
        if errorType != nil { load.setStatus(SpanStatus(code: .error)) }
        load.end()
        s.load = nil
    }

    // MARK: - Helpers

    private func startAttempt(_ number: Int, target: String, fallback: Bool, _ s: inout State) {
        guard let tracer, let load = s.load else { return }
        let span = tracer.startSpan(method.rawValue, context: load.context, ofKind: .client)
        var attributes = describe(s.original, extra: 5)
        s.sends += 1
        if s.sends > 1 { attributes["http.request.resend_count"] = .int64(Int64(s.sends - 1)) }
        attributes["courier.attempt"] = .int64(Int64(number))
        attributes["courier.target"] = .string(target)
        if fallback { attributes["courier.fallback"] = .bool(true) }
        s.attempt = span
        s.attemptAttributes = attributes
    }

    /// The OpenTelemetry HTTP client attributes every span has, in a dictionary with room for `extra` more (no
    /// regrowing as the request adds them).
    private func describe(_ url: HTTPURL?, extra: Int) -> [String: SpanAttribute] {
        var attributes = [String: SpanAttribute](minimumCapacity: 4 + extra)
        attributes["http.request.method"] = .string(method.rawValue)
        attributes["url.full"] = .string(plainFullURL)
        if let url {
            attributes["server.address"] = .string(url.host)
            attributes["server.port"] = .int64(Int64(url.port))
        }
        return attributes
    }

    /// Whether `url` is `original` (compared in place: `!=` on two optionals copies both URLs first).
    private static func same(_ url: HTTPURL, _ original: HTTPURL?) -> Bool {
        guard let original else { return false }
        return url == original
    }

    /// Ends the attempt span, handing it its attributes (the only hand-over).
    private func endAttempt(_ s: inout State) {
        guard let attempt = s.attempt else { return }
        attempt.attributes = SpanAttributes(s.attemptAttributes)
        s.attemptAttributes = [:]
        attempt.end()
        s.attempt = nil
    }

    /// Marks the attempt span (if any) failed with OpenTelemetry's `error.type` (a status code or a failure's
    /// kind); the attribute reaches the span when it ends.
    private func fail(_ s: inout State, type: String) {
        guard let attempt = s.attempt else { return }
        s.attemptAttributes["error.type"] = .string(type)
        attempt.setStatus(SpanStatus(code: .error))
    }

    /// Logs through `logger` (the request's, nil when its level is above `debug`). Takes the logger, not the
    /// whole state: a `State` argument would be a copy of every field, for every event.
    private func log(
        _ logger: Logger?, _ level: Logger.Level, _ message: @autoclosure () -> String, _ event: Event,
        _ metadata: @autoclosure () -> Logger.Metadata = [:]
    ) {
        guard let logger, logger.logLevel <= level else { return }
        var all = metadata()
        all["courier.attempt"] = "\(event.attempt)"
        logger.log(level: level, "\(message())", metadata: all)
    }

    /// A duration as a span attribute, in whole milliseconds.
    private static func milliseconds(_ d: Duration) -> SpanAttribute {
        let (seconds, attoseconds) = d.components
        return .int64(seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }

    private static func name(_ event: CacheEvent) -> String {
        switch event {
        case .hit: "hit"
        case .miss: "miss"
        case .revalidating: "revalidating"
        case .revalidated: "revalidated"
        case .stale: "stale"
        case .stored: "stored"
        case .notStored: "not-stored"
        case .invalidated: "invalidated"
        case .failed: "failed"
        }
    }

    private static func name(_ role: LoaderEvent.RefreshRole) -> String {
        switch role {
        case .started: "started"
        case .joined: "joined"
        case .alreadyRefreshed: "already-refreshed"
        }
    }
}
