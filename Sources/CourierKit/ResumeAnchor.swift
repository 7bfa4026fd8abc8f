internal import CourierCore

/// What a streamed body needs for its rest to be asked for by byte range when it breaks off (RFC 9110 §14): the
/// `If-Range` validator and the length of the representation. Made from the head of the response whose body the
/// consumer receives; nil when that body cannot be resumed.
///
/// A body is resumable when the response is a `200` with no content coding (`Content-Encoding` absent or
/// `identity`: the consumer's bytes are decoded bytes, and a gzip stream cannot be continued from an offset into
/// its decoded output), the server does not say `Accept-Ranges: none`, and it has a strong validator
/// (RFC 9110 §13.1.5): a strong `ETag`, or, with no `ETag` at all, a `Last-Modified` at least one second before
/// the response's `Date` (§8.8.2.2). A weak `ETag` rules the date out too: a client may not send a date in
/// `If-Range` when it has an entity tag.
struct ResumeAnchor: Equatable, Sendable {
    /// The `If-Range` value: the strong `ETag` as received, or the `Last-Modified` date.
    var validator: String
    /// The representation's length, from `Content-Length` (nil when the body was chunked or close-delimited).
    var length: Int64?

    init(validator: String, length: Int64?) {
        self.validator = validator
        self.length = length
    }

    /// The anchor of a response with `status` and `headers`, or nil when its body cannot be resumed.
    init?(status: Int, headers: HTTPHeaders) {
        guard status == 200, Self.isIdentity(headers) else { return nil }
        if let ranges = headers["Accept-Ranges"], ranges.trimmingHTTPWhitespace.lowercased() == "none" { return nil }
        if let tag = headers["ETag"].map({ String($0.trimmingHTTPWhitespace) }) {
            // A weak tag (W/"...") may not go in If-Range, and with a tag a date may not either.
            guard tag.hasPrefix("\""), tag.hasSuffix("\""), tag.count >= 2 else { return nil }
            validator = tag
        } else {
            guard let modifiedText = headers["Last-Modified"], let modified = HTTPDate.parse(modifiedText),
                let dateText = headers["Date"], let date = HTTPDate.parse(dateText), date - modified >= 1
            else { return nil }
            validator = String(modifiedText.trimmingHTTPWhitespace)
        }
        length = headers["Content-Length"].flatMap { Int64($0.trimmingHTTPWhitespace) }
    }

    /// Whether `headers` say the body has no content coding.
    static func isIdentity(_ headers: HTTPHeaders) -> Bool {
        guard let coding = headers["Content-Encoding"] else { return true }
        let trimmed = coding.trimmingHTTPWhitespace.lowercased()
        return trimmed.isEmpty || trimmed == "identity"
    }
}
