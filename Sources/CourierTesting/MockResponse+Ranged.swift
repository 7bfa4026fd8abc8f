public import CourierCore

extension MockResponse {
    /// `representation` answered as a server with byte ranges answers `request`: `206` with `Content-Range` for a
    /// `Range: bytes=…` it can satisfy (`416` for one it cannot), `200` with the whole otherwise, or when the
    /// request's `If-Range` is not `etag` (the representation changed: RFC 9110 §13.1.5). Every answer carries
    /// `ETag: etag` and `Accept-Ranges: bytes`, so that a body that breaks off can be resumed; a route that returns
    /// `.ranged(of: bytes, for: request).disconnecting(afterBodyBytes: n)` tests resumption with no server.
    ///
    /// A list of several ranges is answered whole (there is no `multipart/byteranges`).
    public static func ranged(
        of representation: [UInt8], for request: MockRequest, etag: String = #""mock-1""#, headers: HTTPHeaders = HTTPHeaders()
    ) -> MockResponse {
        var fields = headers
        fields.add(name: "ETag", value: etag)
        fields.add(name: "Accept-Ranges", value: "bytes")
        let ifRange = request.headers["if-range"]
        let range = ifRange == nil || ifRange == etag ? request.headers["range"] : nil
        switch ByteRange(range, size: representation.count) {
        case .whole:
            return MockResponse(status: 200, headers: fields, body: representation)
        case .partial(let part):
            fields.add(name: "Content-Range", value: "bytes \(part.lowerBound)-\(part.upperBound - 1)/\(representation.count)")
            return MockResponse(status: 206, headers: fields, body: Array(representation[part]))
        case .unsatisfiable:
            fields.add(name: "Content-Range", value: "bytes */\(representation.count)")
            return MockResponse(status: 416, headers: fields)
        }
    }
}
