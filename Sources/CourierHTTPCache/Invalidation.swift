package import CourierCore

/// The stored responses an unsafe request invalidates (RFC 9111 §4.4).
///
/// When a request with an unsafe method (anything but GET, HEAD, OPTIONS and TRACE, RFC 9110 §9.2.1) gets a
/// non-error response (2xx or 3xx), the cache invalidates the target URL, and the URLs in `Location` and
/// `Content-Location` (resolved against the target URL) when they have the same origin (scheme, host and
/// port) as the target; other origins are never invalidated (§4.4: to avoid denial-of-service). Invalidating a
/// URL means every stored response for it, whatever its `Vary`d request fields: the loader removes them all.
package enum Invalidation {
    /// Whether `method` is unsafe (RFC 9110 §9.2.1).
    package static func isUnsafe(_ method: HTTPMethod) -> Bool {
        ![HTTPMethod.get, .head, .options, .trace].contains(method)
    }

    /// The URLs to invalidate after a `method` request to `url` was answered with `status` and
    /// `responseHeaders`, without duplicates, target first; empty for a safe method or an error status.
    /// A URL's fragment never reaches here (``HTTPURL`` has none), so `/a` and `/a#x` are the same entry.
    package static func urls(method: HTTPMethod, url: HTTPURL, status: Int, responseHeaders: HTTPHeaders) -> [HTTPURL] {
        guard isUnsafe(method), (200..<400).contains(status) else { return [] }
        var result = [url]
        for name in ["Location", "Content-Location"] {
            guard let reference = responseHeaders[name].map({ String($0.trimmingHTTPWhitespace) }),
                let resolved = url.resolving(reference), resolved.origin == url.origin,
                !result.contains(resolved)
            else { continue }
            result.append(resolved)
        }
        return result
    }
}
