/// A content coding Courier can decode (RFC 9110 §8.4.1).
package enum ContentCoding: String, Hashable, Sendable, CaseIterable {
    /// gzip (RFC 1952), also accepted as `x-gzip`. A zlib-wrapped stream labelled gzip is decoded too.
    case gzip
    /// "deflate": a zlib-wrapped stream (RFC 1950), or the raw deflate (RFC 1951) some servers send instead.
    case deflate

    /// The coding named by one `Content-Encoding` token (case-insensitive), or nil when Courier cannot decode it
    /// (`br`, `zstd`, `compress`, ...). `identity` is not a coding to decode, so it gives nil too.
    package init?(token: String) {
        switch token.lowercased() {
        case "gzip", "x-gzip": self = .gzip
        case "deflate": self = .deflate
        default: return nil
        }
    }

    /// The value Courier sends in `Accept-Encoding` by default.
    package static let acceptEncoding = "gzip, deflate"
}
