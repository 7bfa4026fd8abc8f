internal import CourierCore
internal import CourierKit
internal import CourierTransport

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
    /// The Unix domain socket each URL (by its index) is sent to: `--unix-socket`, or an `http+unix://` URL's own;
    /// nil for TCP. Without `--policy` only.
    var unixSockets: [String?] = []

    /// The socket of the `index`-th URL.
    func unixSocket(at index: Int) -> String? { index < unixSockets.count ? unixSockets[index] : nil }

    /// `-I`: write the head only, never a body.
    var headOnly = false

    /// `-F`: the multipart form, streamed (files read as they are sent) and made again for every attempt.
    var formBody: RequestBodyStream?

    /// `-C`: where each URL's download continues (nil: from its first byte).
    var continueAt: ResumeOptions.Offset?

    /// The byte the download to `output` continues at (0: the whole body): `-C N`, or `-C -`'s file size.
    func resumeOffset(into output: BodyWriter) -> Int64 {
        switch continueAt {
        case nil: return 0
        case .at(let offset): return offset
        case .fileSize:
            guard case .file(let file) = output.destination.target else { return 0 }
            return file.size
        }
    }

    /// The `-H` fields, asking for the bytes from `offset` on when it is more than 0.
    func headers(from offset: Int64) -> HTTPHeaders {
        guard offset > 0 else { return headers }
        var fields = headers
        fields.replaceOrAdd(name: "Range", value: "bytes=\(offset)-")
        return fields
    }

    /// The transport's body: `-d`'s bytes, or the form's stream (with `Content-Length` when its size is known).
    var transportBody: HTTPRequest.Body {
        if let formBody {
            return formBody.length.map { .sizedStream(length: $0, formBody.makeStream()) } ?? .stream(formBody.makeStream())
        }
        return body.map { .bytes($0) } ?? .none
    }

    /// Which proxy each request (and each redirect hop) goes through without `--policy`: `-x`, `--noproxy`, the
    /// environment.
    var proxySelection: ProxySelection?

    /// Whether `status` is one `--fail` turns into exit status 22.
    func fails(_ status: Int) -> Bool { failOnHTTPError && status >= 400 }

    /// How a delivered response with `status` ends for its `-o` file: nothing to write when `--fail` refuses it
    /// or for a 304 (it has no body, and the copy the caller revalidated must stay as it is); else its file is
    /// created, even for an empty body.
    func end(for status: Int) -> FetchOutcome.End { fails(status) || status == 304 ? .nothingToWrite : .complete }

    /// The `-i` head: the status line with the version the server sent (`HTTP/1.0`, `HTTP/1.1`), the header
    /// fields, CRLF-separated, and the blank line.
    static func head(version: String, status: Int, reason: String, headers: HTTPHeaders) -> [UInt8] {
        var text = "\(version) \(status) \(reason)\r\n"
        for field in headers { text += "\(field.name): \(field.value)\r\n" }
        return Array((text + "\r\n").utf8)
    }
}
