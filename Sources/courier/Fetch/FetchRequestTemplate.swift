internal import CourierCore

/// What every URL of one `courier fetch` run is sent with, and what to do with the answers.
struct FetchRequestTemplate: Sendable {
    /// `-X`, or GET (POST with `-d`).
    var method: HTTPMethod
    /// `-H` fields, in the order given.
    var headers: HTTPHeaders
    /// `-d` bytes (nil for no body).
    var body: [UInt8]?
    /// `--max-time`: the request's total deadline (with `--policy`, every attempt and wait included).
    var maxTime: Duration?
    /// `-i`: write the response head before the body.
    var includeHead: Bool
    /// `--fail`: exit 22 and write no body for a status of 400 or more.
    var failOnHTTPError: Bool
    /// Whether to send `Accept-Encoding` and decode (off after `-H 'Accept-Encoding:'`; without `--policy` only).
    var decompress = true
    /// Which proxy each request (and each redirect hop) goes through without `--policy`: `-x`, `--noproxy`, the
    /// environment.
    var proxySelection: ProxySelection?

    /// Whether `status` is one `--fail` turns into exit status 22.
    func fails(_ status: Int) -> Bool { failOnHTTPError && status >= 400 }

    /// How a delivered response with `status` ends for its `-o` file: nothing to write when `--fail` refuses it
    /// or for a 304 (it has no body, and the copy the caller revalidated must stay as it is); else its file is
    /// created, even for an empty body.
    func end(for status: Int) -> FetchOutcome.End { fails(status) || status == 304 ? .nothingToWrite : .complete }

    /// The `-i` head: a status line and the header fields, CRLF-separated, with the blank line.
    static func head(status: Int, reason: String, headers: HTTPHeaders) -> [UInt8] {
        var text = "HTTP/1.1 \(status) \(reason)\r\n"
        for field in headers { text += "\(field.name): \(field.value)\r\n" }
        return Array((text + "\r\n").utf8)
    }
}
