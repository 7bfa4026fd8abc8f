package import CourierCore

/// The validators of a stored response and the conditional request built from them (RFC 9111 §4.3.1).
///
/// `If-None-Match` carries the stored `ETag` (weak or strong: RFC 9110 §13.1.2 compares weakly).
/// `If-Modified-Since` carries the stored `Last-Modified` only: RFC 9111 §4.3.1 allows the `Date` when there is
/// no `Last-Modified`, but a `Date` is not a validator the origin chose, so it is not sent. Both are sent when
/// both exist (RFC 9110 §13.1.3: the origin then ignores `If-Modified-Since`).
package struct Validators: Hashable, Sendable {
    /// The stored response's first `ETag` value, as received.
    package var entityTag: String?
    /// The stored response's first `Last-Modified` value, as received, when it is a valid HTTP-date.
    package var lastModified: String?

    /// The validators of a stored response with `headers`.
    package init(storedHeaders headers: HTTPHeaders) {
        entityTag = headers["ETag"].map { String($0.trimmingHTTPWhitespace) }.flatMap { $0.isEmpty ? nil : $0 }
        lastModified = headers["Last-Modified"].flatMap { value in
            HTTPDate.parse(value) == nil ? nil : String(value.trimmingHTTPWhitespace)
        }
    }

    /// Whether there is anything to validate with; without validators a stale response is simply re-fetched.
    package var isEmpty: Bool { entityTag == nil && lastModified == nil }

    /// `headers` (a new request's) made conditional: any `If-None-Match` and `If-Modified-Since` the request
    /// already had are replaced by the stored response's validators.
    package func conditionalHeaders(_ headers: HTTPHeaders) -> HTTPHeaders {
        var result = headers
        if let entityTag { result.replaceOrAdd(name: "If-None-Match", value: entityTag) }
        if let lastModified { result.replaceOrAdd(name: "If-Modified-Since", value: lastModified) }
        return result
    }
}
