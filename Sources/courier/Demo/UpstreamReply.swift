internal import CourierKit
internal import CourierCore

/// A response the demo upstream sends: always with `Content-Length` and `Connection: close` (one request per
/// connection keeps the server small; the client opens a new connection for the next request).
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

    /// The reason phrase sent on the status line.
    var reason: String {
        switch status {
        case 200: return "OK"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 404: return "Not Found"
        case 413: return "Content Too Large"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 501: return "Not Implemented"
        case 503: return "Service Unavailable"
        case 505: return "HTTP Version Not Supported"
        default: return "Status"
        }
    }

    /// The bytes on the wire: status line, the fields, `Content-Length`, `Connection: close`, the body.
    var serialized: [UInt8] {
        var head = "HTTP/1.1 \(status) \(reason)\r\n"
        for field in headers { head += "\(field.name): \(field.value)\r\n" }
        head += "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        return Array(head.utf8) + body
    }
}
