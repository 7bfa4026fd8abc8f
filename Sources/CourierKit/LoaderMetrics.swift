import CoreMetrics

/// The loader's metrics: their names, and the recording of one value through the service's `MetricsFactory`.
/// Dimensions are bounded by the policy (service and endpoint key), the method and a status class; a URL is never
/// one (docs/observability.md lists every metric).
struct LoaderMetrics: Sendable {
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

    let factory: any MetricsFactory

    func count(_ label: String, _ dimensions: [(String, String)], by amount: Int64 = 1) {
        factory.makeCounter(label: label, dimensions: dimensions).increment(by: amount)
    }

    func time(_ label: String, _ dimensions: [(String, String)], _ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        factory.makeTimer(label: label, dimensions: dimensions).recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    /// `2xx` for 204, `error` for no status.
    static func statusClass(_ status: Int?) -> String {
        guard let status, (100..<600).contains(status) else { return "error" }
        return "\(status / 100)xx"
    }
}
