/// A service's rate limits: one for each endpoint key unless an endpoint override matches.
///
/// The limiter keeps one bucket per **endpoint key**: host plus the first path component
/// (`api.example.com/v1`). An endpoint override (`endpoints: { /v1/search: … }`) is a path prefix matched on
/// segment boundaries; the longest matching prefix wins and its bucket is keyed by host plus that prefix
/// (`api.example.com/v1/search`).
public struct RateLimitPolicy: Hashable, Sendable {
    /// The limit for endpoint keys no override matches; nil means unlimited.
    public package(set) var perEndpoint: RateLimit?
    /// Overrides by path prefix (each starts with `/`).
    public package(set) var endpoints: [String: RateLimit]

    package init(perEndpoint: RateLimit?, endpoints: [String: RateLimit] = [:]) {
        self.perEndpoint = perEndpoint
        self.endpoints = endpoints
    }

    /// No limit.
    public static let unlimited = RateLimitPolicy(perEndpoint: nil)

    /// The matching override's prefix and limit for `path`, or nil.
    public func override(forPath path: String) -> (prefix: String, limit: RateLimit)? {
        guard !endpoints.isEmpty else { return nil }
        var candidate = Substring(path)
        if let q = candidate.firstIndex(of: "?") { candidate = candidate[..<q] }
        while !candidate.isEmpty {
            if let limit = endpoints[String(candidate)] { return (String(candidate), limit) }
            guard let slash = candidate.lastIndex(of: "/") else { break }
            candidate = candidate[..<slash]
        }
        return nil
    }
}
