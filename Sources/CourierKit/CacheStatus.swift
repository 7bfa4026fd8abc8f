/// How the HTTP cache took part in a response (``Response/cache``): nil when the route's service does not cache.
public enum CacheStatus: String, Sendable, Hashable, CaseIterable {
    /// A fresh stored response: no request was sent.
    case hit
    /// Nothing usable was stored: the response came from the origin (and was stored if it may be).
    case miss
    /// A stored response was stale; the origin answered a conditional request with 304, and the stored body
    /// was returned with the freshened fields.
    case revalidated
    /// A stale stored response was returned: the request allowed it (`max-stale`, `stale-while-revalidate`), the
    /// origin failed within its `stale-if-error` window, or the factory is offline.
    case stale
    /// An identical request was in flight: this one got a copy of its response.
    case coalesced
}
