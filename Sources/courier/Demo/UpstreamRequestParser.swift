internal import CourierCore

/// Reads one HTTP/1.1 request from the bytes of a connection, as they arrive: a pure state machine (bytes in,
/// a request or an error out; no I/O). The upstream serves one request per connection, so bytes after the
/// request are ignored.
///
/// Bounded: the head may take ``maxHeadBytes`` and the body (`Content-Length` only; chunked bodies are refused
/// with 501) ``maxBodyBytes``, so a broken or hostile peer gets a clear error, never unbounded buffering.
struct UpstreamRequestParser {
    static let maxHeadBytes = 16 * 1024
    static let maxBodyBytes = 64 * 1024

    private enum State {
        /// Collecting the head until CRLF CRLF.
        case head(buffer: [UInt8])
        /// The head is parsed; collecting `length` body bytes.
        case body(request: UpstreamRequest, length: Int)
        /// A request was returned or an error thrown; nothing more is read.
        case done
    }

    private var state = State.head(buffer: [])

    /// Takes the next bytes of the connection.
    ///
    /// - Returns: the request once it is complete, nil while more bytes are needed.
    /// - Throws: ``UpstreamRequestError`` for a malformed or oversized request.
    mutating func receive(_ bytes: [UInt8]) throws(UpstreamRequestError) -> UpstreamRequest? {
        switch state {
        case .done:
            preconditionFailure("Invalid state: \(state)")
        case .head(var buffer):
            buffer += bytes
            guard let end = UpstreamRequestParser.headEnd(in: buffer) else {
                guard buffer.count <= UpstreamRequestParser.maxHeadBytes else {
                    state = .done
                    throw UpstreamRequestParser.headTooLong
                }
                state = .head(buffer: buffer)
                return nil
            }
            guard end <= UpstreamRequestParser.maxHeadBytes else {
                state = .done
                throw UpstreamRequestParser.headTooLong
            }
            let request: UpstreamRequest
            let length: Int
            do {
                (request, length) = try UpstreamRequestParser.parseHead(buffer[..<end])
            } catch {
                state = .done
                throw error
            }
            state = .body(request: request, length: length)
            return try receiveBody(Array(buffer[(end + 4)...]))
        case .body:
            return try receiveBody(bytes)
        }
    }

    /// Whether the parser is still waiting for bytes (false once a request or an error came out).
    var needsMoreBytes: Bool {
        if case .done = state { return false }
        return true
    }

    private mutating func receiveBody(_ bytes: [UInt8]) throws(UpstreamRequestError) -> UpstreamRequest? {
        guard case .body(var request, let length) = state else { preconditionFailure("Invalid state: \(state)") }
        request.body += bytes.prefix(length - request.body.count)
        if request.body.count == length {
            state = .done
            return request
        }
        state = .body(request: request, length: length)
        return nil
    }

    private static let headTooLong = UpstreamRequestError(
        status: 431, message: "the request head is longer than \(maxHeadBytes) bytes"
    )

    /// The index of the CRLF CRLF that ends the head, if it has arrived.
    private static func headEnd(in buffer: [UInt8]) -> Int? {
        guard buffer.count >= 4 else { return nil }
        for i in 0...(buffer.count - 4)
        where buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 {
            return i
        }
        return nil
    }

    private static func parseHead(_ head: ArraySlice<UInt8>) throws(UpstreamRequestError) -> (UpstreamRequest, Int) {
        guard let text = String(validating: head, as: UTF8.self) else {
            throw .malformed("the request head is not UTF-8")
        }
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        guard !lines.isEmpty else { throw .malformed("the request has no request line") }
        let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: false)
        guard requestLine.count == 3, !requestLine[0].isEmpty, requestLine[1].hasPrefix("/") else {
            throw .malformed("the request line is not 'METHOD /target HTTP/1.1'")
        }
        guard requestLine[2] == "HTTP/1.1" || requestLine[2] == "HTTP/1.0" else {
            throw UpstreamRequestError(status: 505, message: "the upstream speaks HTTP/1.1, not '\(requestLine[2])'")
        }
        var headers = HTTPHeaders()
        for line in lines {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
                throw .malformed("the header line '\(line.prefix(40))' has no name")
            }
            let name = String(line[..<colon])
            let value = String(line[line.index(after: colon)...].trimmingHTTPWhitespace)
            guard HTTPHeaders.isValidName(name) else { throw .malformed("'\(name.prefix(40))' is not a header name") }
            headers.add(name: name, value: value)
        }
        if headers.contains("transfer-encoding") {
            throw UpstreamRequestError(status: 501, message: "the demo upstream reads Content-Length bodies only")
        }
        var length = 0
        if let value = headers["content-length"] {
            guard let n = Int(value), n >= 0 else { throw .malformed("Content-Length '\(value.prefix(20))' is not a number") }
            guard n <= maxBodyBytes else {
                throw UpstreamRequestError(status: 413, message: "the body is longer than \(maxBodyBytes) bytes")
            }
            length = n
        }
        let request = UpstreamRequest(
            method: String(requestLine[0]), target: String(requestLine[1]), headers: headers, body: []
        )
        return (request, length)
    }
}
