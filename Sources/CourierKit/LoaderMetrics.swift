internal import CoreMetrics
internal import CourierCore
internal import Synchronization

/// The loader's metrics: their names, and the recording of one value through the service's `MetricsFactory`.
/// Dimensions are bounded by the policy (service and endpoint key), the method and a status class; a URL is never
/// one (docs/observability.md lists every metric).
final class LoaderMetrics: Sendable {
    /// Requests finished: service, endpoint, method, status_class (`2xx`…`5xx`, or `error` without a response).
    static let requests = "courier_requests"
    /// Attempts made, summed at each request's end: service, endpoint, method.
    static let attempts = "courier_attempts"
    /// Retries: service, endpoint, reason (the status code, or the failure's kind: `timeout`, `connect`, …).
    static let retries = "courier_retries"
    /// Time spent waiting for the rate limit, per wait (timer): service, endpoint.
    static let rateLimitWait = "courier_rate_limit_wait"
    /// Retry-After pauses applied to an endpoint key: service, endpoint.
    static let retryAfterPauses = "courier_retry_after_pauses"
    /// Attempts sent to a fallback address: service, endpoint.
    static let fallbacks = "courier_fallbacks"
    /// Credential refreshes after a 401: service, authoriser, role (`started`, `joined`, `already-refreshed`).
    static let tokenRefreshes = "courier_token_refreshes"
    /// From the start of a load to its end (timer): service, endpoint, method, status_class.
    static let duration = "courier_request_duration"
    /// From sending the final attempt to its first response byte (timer): service, endpoint, method.
    static let timeToFirstByte = "courier_request_ttfb"
    /// Bytes written, headers included, over all attempts: service, endpoint.
    static let bytesSent = "courier_bytes_sent"
    /// Bytes read, headers included, over all attempts: service, endpoint.
    static let bytesReceived = "courier_bytes_received"
    /// Fresh stored responses served: service.
    static let cacheHits = "courier_cache_hits"
    /// Stale stored responses served: service.
    static let cacheStaleHits = "courier_cache_stale_hits"
    /// Lookups that found nothing usable: service.
    static let cacheMisses = "courier_cache_misses"
    /// Conditional requests sent to revalidate a stored response: service.
    static let cacheRevalidations = "courier_cache_revalidations"
    /// Time a fleet-scoped rate limit held a request, per wait (timer): service, endpoint.
    static let fleetWait = "courier_fleet_wait"
    /// Fleet-limited attempts for which the coordination backend could not be asked: service, endpoint,
    /// on_unavailable (`local`, `open`, `closed`).
    static let coordinationUnavailable = "courier_coordination_unavailable"
    /// Retry-After pauses shared with the fleet: service, endpoint.
    static let fleetPauses = "courier_fleet_pauses"
    /// Shared-token decisions of the fleet's token store: outcome (`reused`, `refreshed`, `waited`, `local`).
    static let sharedTokens = "courier_shared_tokens"

    let factory: any MetricsFactory
    /// The handlers of the figures every request records, per dimension set: one look-up per request instead of
    /// one factory call per figure (a factory hashes the label and every dimension, under its lock).
    private let perRequest = Mutex<[RequestKey: RequestHandlers]>([:])

    init(factory: any MetricsFactory) {
        self.factory = factory
    }

    private struct RequestKey: Hashable {
        var service, endpoint, method, statusClass: String
    }

    /// A class: taken out of the table with one reference count, not one per handler.
    private final class RequestHandlers: Sendable {
        let requests: any CounterHandler
        let attempts: any CounterHandler
        let duration: any TimerHandler
        let timeToFirstByte: any TimerHandler
        let bytesSent: any CounterHandler
        let bytesReceived: any CounterHandler

        init(
            requests: any CounterHandler, attempts: any CounterHandler, duration: any TimerHandler,
            timeToFirstByte: any TimerHandler, bytesSent: any CounterHandler, bytesReceived: any CounterHandler
        ) {
            self.requests = requests
            self.attempts = attempts
            self.duration = duration
            self.timeToFirstByte = timeToFirstByte
            self.bytesSent = bytesSent
            self.bytesReceived = bytesReceived
        }
    }

    /// Records a finished request's figures.
    func finished(
        service: String, endpoint: String, method: String, statusClass: String, attempts: Int, duration: Duration,
        firstByte: Duration?, bytesSent: Int64, bytesReceived: Int64
    ) {
        let key = RequestKey(service: service, endpoint: endpoint, method: method, statusClass: statusClass)
        let handlers = perRequest.withLock { table in
            if let known = table[key] { return known }
            let route = [("service", service), ("endpoint", endpoint)]
            let withMethod = route + [("method", method)]
            let withStatus = withMethod + [("status_class", statusClass)]
            let made = RequestHandlers(
                requests: factory.makeCounter(label: Self.requests, dimensions: withStatus),
                attempts: factory.makeCounter(label: Self.attempts, dimensions: withMethod),
                duration: factory.makeTimer(label: Self.duration, dimensions: withStatus),
                timeToFirstByte: factory.makeTimer(label: Self.timeToFirstByte, dimensions: withMethod),
                bytesSent: factory.makeCounter(label: Self.bytesSent, dimensions: route),
                bytesReceived: factory.makeCounter(label: Self.bytesReceived, dimensions: route)
            )
            table[key] = made
            return made
        }
        handlers.requests.increment(by: 1)
        if attempts > 0 { handlers.attempts.increment(by: Int64(attempts)) }
        handlers.duration.recordNanoseconds(duration.nanosecondsClamped)
        if let firstByte { handlers.timeToFirstByte.recordNanoseconds(firstByte.nanosecondsClamped) }
        if bytesSent > 0 { handlers.bytesSent.increment(by: bytesSent) }
        if bytesReceived > 0 { handlers.bytesReceived.increment(by: bytesReceived) }
    }

    func count(_ label: String, _ dimensions: [(String, String)], by amount: Int64 = 1) {
        factory.makeCounter(label: label, dimensions: dimensions).increment(by: amount)
    }

    func time(_ label: String, _ dimensions: [(String, String)], _ duration: Duration) {
        factory.makeTimer(label: label, dimensions: dimensions).recordNanoseconds(duration.nanosecondsClamped)
    }


    /// `2xx` for 204, `error` for no status.
    static func statusClass(_ status: Int?) -> String {
        guard let status, (100..<600).contains(status) else { return "error" }
        return statusClasses[status / 100 - 1]
    }

    private static let statusClasses = ["1xx", "2xx", "3xx", "4xx", "5xx"]
}
