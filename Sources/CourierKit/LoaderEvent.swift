public import CourierCore

/// One decision the loader made for a request, and why, reported to the service's trace observers as it
/// happens (see ``DataLoaderService/addTraceObserver(_:)``). Traces are for people and logs: `courier demo`
/// prints them, an app can feed them to its logger.
public struct LoaderEvent: Sendable, CustomStringConvertible {
    /// What happened.
    public enum Kind: Sendable {
        /// The loader accepted the request; `route` names the service it matched (nil for the defaults).
        case started(method: HTTPMethod, service: String?)
        /// The request waits for the rate limit (or a Retry-After pause) of its endpoint key.
        case rateLimited(key: EndpointKey, wait: Duration)
        /// The request waits for its authoriser.
        case authorising(authoriser: String)
        /// An attempt goes to `target` (`host:port`); `fallback` is true for an address from the route's
        /// fallback list, whose connection carries the original Host header.
        case connecting(target: String, fallback: Bool)
        /// `target` is skipped: it failed recently and is cooling down.
        case coolingDown(target: String)
        /// `target` could not be resolved or connected to; the next fallback is tried.
        case unreachable(target: String, error: CourierError)
        /// A response head arrived for the attempt.
        case response(status: Int)
        /// The server asked for `requested` with Retry-After; the endpoint key pauses for `applied` (the policy's
        /// cap), or 0 when the route does not respect Retry-After.
        case retryAfter(requested: Duration, applied: Duration, key: EndpointKey)
        /// A 401 came back: the authoriser's credentials are refreshed before one more attempt. `role` says
        /// whether this request started the refresh, joined one under way, or found the credentials already
        /// replaced since it was authorised (single flight: however many requests get a 401 together, one
        /// starts the refresh).
        case refreshing(authoriser: String, role: RefreshRole)
        /// The attempt failed with `reason` and the request is tried again after `delay` (back-off or
        /// Retry-After, whichever is longer).
        case retrying(reason: String, delay: Duration)
        /// The attempt failed with `reason` and is final because of `why` (attempts, methods, budget, deadline).
        case givingUp(reason: String, why: String)
        /// The request finished with a response (`status`) or an error.
        case finished(status: Int?, error: CourierError?)
        /// An identical cacheable request was in flight: this one waits for its response instead of sending.
        case coalesced
        /// What the HTTP cache did (only for routes whose service caches).
        case cache(CacheEvent)
        /// What the fleet's coordination did (only for routes whose rate limit has `scope: fleet`).
        case coordination(CoordinationEvent)
    }

    /// A request's part in a credentials refresh.
    public enum RefreshRole: Sendable, Hashable {
        /// This request started the refresh.
        case started
        /// A refresh was already under way; this request waits for it.
        case joined
        /// A refresh finished after this request was authorised; it retries with the new credentials.
        case alreadyRefreshed
    }

    /// The service-wide number of the request (1, 2, …), the same for every event of one request.
    public var request: UInt64
    /// The request's URL as given.
    public var url: String
    /// The attempt the event belongs to (1 for the first; 0 before the first attempt starts).
    public var attempt: Int
    /// When it happened, on the service's clock (`DataLoaderService.Configuration.clock`: with a `ManualClock`,
    /// its time).
    public var at: ContinuousClock.Instant
    /// What happened.
    public var kind: Kind
    /// More words than ``kind`` carries, when the loader has them (why a `cache miss` removed a corrupt record);
    /// ``description`` adds them in parentheses.
    package var detail: String?

    /// An event (for tests and for observers that forward events of their own).
    package init(request: UInt64, url: String, attempt: Int, at: ContinuousClock.Instant, kind: Kind) {
        self.request = request
        self.url = url
        self.attempt = attempt
        self.at = at
        self.kind = kind
    }

    /// One line for people, e.g. `#3 attempt 2: retrying in 412ms after status 503`.
    public var description: String {
        "#\(request) attempt \(attempt): \(summary)" + (detail.map { " (\($0))" } ?? "")
    }

    /// The event in words, without the request number.
    public var summary: String { Self.summary(of: kind, url: url) }

    /// The words of an event of `kind` on a request for `url` (what ``summary`` says).
    static func summary(of kind: Kind, url: String) -> String {
        switch kind {
        case .started(let method, let service):
            return "\(method) \(url) (service \(service ?? "<defaults>"))"
        case .rateLimited(let key, let wait):
            return "waiting \(LoaderEvent.short(wait)) for the rate limit of \(key)"
        case .authorising(let name):
            return "authorising with '\(name)'"
        case .connecting(let target, let fallback):
            return fallback ? "sending to fallback \(target) (Host header unchanged)" : "sending to \(target)"
        case .coolingDown(let target):
            return "skipping \(target): it failed recently and is cooling down"
        case .unreachable(let target, let error):
            return "\(target) is unreachable (\(error.kind): \(error.message))"
        case .response(let status):
            return "status \(status)"
        case .retryAfter(let requested, let applied, let key):
            if applied == .zero { return "Retry-After \(LoaderEvent.short(requested)) ignored (the route does not respect it)" }
            let capped = applied < requested ? " (capped by the policy)" : ""
            return "Retry-After \(LoaderEvent.short(requested)): pausing \(key) for \(LoaderEvent.short(applied))\(capped)"
        case .refreshing(let name, .started):
            return "401: refreshing '\(name)' and trying once more"
        case .refreshing(let name, .joined):
            return "401: joining the refresh of '\(name)' under way, then trying once more"
        case .refreshing(let name, .alreadyRefreshed):
            return "401: '\(name)' was refreshed since this request was authorised; trying once more"
        case .retrying(let reason, let delay):
            return "retrying in \(LoaderEvent.short(delay)) after \(reason)"
        case .givingUp(let reason, let why):
            return "not retrying \(reason): \(why)"
        case .coalesced:
            return "an identical request is in flight: sharing its response"
        case .cache(let event):
            return event.description
        case .coordination(let event):
            return event.description
        case .finished(let status, let error):
            if let error { return "failed: \(error.kind): \(error.message)" }
            return "done: status \(status.map(String.init) ?? "-")"
        }
    }

    /// A duration rounded for a trace line: whole milliseconds under 10 s, tenths of a second above.
    static func short(_ d: Duration) -> String {
        let ms = d.seconds * 1000
        if ms < 10_000 { return "\(Int(ms.rounded()))ms" }
        return "\((ms / 100).rounded() / 10)s"
    }
}
