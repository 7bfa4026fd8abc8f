internal import CourierCore

/// What a ``MockResponse`` becomes on an HTTP/1.1 connection: bytes to send and waits between them, in order, and
/// whether the connection closes at the end. Pure: made from the response alone, no socket and no clock; a
/// server carries it out step by step (waiting from the response's start, so that the waits do not drift).
package struct MockWirePlan: Hashable, Sendable {
    package enum Step: Hashable, Sendable {
        case send([UInt8])
        case wait(Duration)
    }

    /// How many slices a throttled second is sent in.
    package static let slicesPerSecond = MockBodyPlan.slicesPerSecond

    package private(set) var steps: [Step] = []
    /// The connection closes after the last step: the response asked for it, the request did not keep the
    /// connection alive, or the body is cut.
    package private(set) var closes: Bool
    /// The number of body bytes the plan sends (the cut ones not counted).
    package private(set) var bodyBytesSent = 0

    /// The sum of the plan's waits.
    package var totalWait: Duration {
        steps.reduce(.zero) { sum, step in
            if case .wait(let duration) = step { return sum + duration }
            return sum
        }
    }

    /// - Parameters:
    ///   - headOnly: the request was `HEAD`: the head (with the body's framing fields) and no body.
    ///   - keepAlive: whether the request allows another one on the connection after this answer.
    package init(_ response: MockResponse, headOnly: Bool, keepAlive: Bool) {
        closes = response.closesConnection || !keepAlive
        if response.delayBeforeHead > .zero { steps.append(.wait(response.delayBeforeHead)) }
        let body = MockBodyPlan(response)
        let head = Self.head(response, chunked: body.isChunked, closes: closes)
        guard !headOnly else {
            steps.append(.send(head))
            return
        }
        var pending = head
        for step in body.steps {
            switch step {
            case .chunkStart(let size): pending += Array(String(size, radix: 16).utf8) + [13, 10]
            case .bytes(let bytes): pending += bytes
            case .chunkEnd: pending += [13, 10]
            case .wait(let duration):
                flush(&pending)
                steps.append(.wait(duration))
            }
        }
        bodyBytesSent = body.bytesSent
        if body.isChunked && !body.isCut { pending += Array("0\r\n\r\n".utf8) }
        flush(&pending)
        if response.disconnectAfterBodyBytes != nil { closes = true }
    }

    private mutating func flush(_ pending: inout [UInt8]) {
        guard !pending.isEmpty else { return }
        steps.append(.send(pending))
        pending = []
    }

    /// The status line and the header section, with the framing fields the script did not write itself.
    private static func head(_ response: MockResponse, chunked: Bool, closes: Bool) -> [UInt8] {
        var text = "HTTP/1.1 \(response.status) \(reason(response.status))\r\n"
        for field in response.headers { text += "\(field.name): \(field.value)\r\n" }
        let framed = response.headers.contains("content-length") || response.headers.contains("transfer-encoding")
        if !framed {
            text += chunked ? "Transfer-Encoding: chunked\r\n" : "Content-Length: \(response.bodyBytes.count)\r\n"
        }
        if closes && !response.headers.contains("connection") { text += "Connection: close\r\n" }
        return Array((text + "\r\n").utf8)
    }

    /// A reason phrase for the common statuses (clients ignore it; people reading a capture do not).
    package static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 413: "Content Too Large"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default: "Status \(status)"
        }
    }
}
