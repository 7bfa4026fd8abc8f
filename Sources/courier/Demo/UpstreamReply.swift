internal import CourierCore
internal import CourierTesting

/// A response the demo upstream sends, with `Content-Length`, on a connection the client may keep.
struct UpstreamReply: Sendable {
    var status: Int
    var headers: HTTPHeaders
    var body: [UInt8]

    init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: String) {
        self.status = status
        self.headers = headers
        self.body = Array(body.utf8)
    }

    /// A JSON body (already encoded by the caller).
    static func json(_ status: Int, _ body: String, headers: HTTPHeaders = HTTPHeaders()) -> UpstreamReply {
        var all = headers
        all.add(name: "Content-Type", value: "application/json")
        return UpstreamReply(status: status, headers: all, body: body)
    }

    /// A plain-text body.
    static func text(_ status: Int, _ body: String, headers: HTTPHeaders = HTTPHeaders()) -> UpstreamReply {
        var all = headers
        all.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        return UpstreamReply(status: status, headers: all, body: body + "\n")
    }

    /// What the demo's ``MockServer`` sends: the fields, then `Content-Length` (the server adds it).
    var response: MockResponse {
        MockResponse(status: status, headers: headers, body: body)
    }
}
