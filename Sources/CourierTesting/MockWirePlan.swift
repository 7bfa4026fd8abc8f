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
    package static let slicesPerSecond = 20

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
        let chunks: [[UInt8]]?
        switch response.body {
        case .whole: chunks = nil
        case .chunked(let pieces): chunks = pieces.filter { !$0.isEmpty }
        }
        let head = Self.head(response, chunked: chunks != nil, closes: closes)
        guard !headOnly else {
            steps.append(.send(head))
            return
        }
        var pending = head
        var budget = response.disconnectAfterBodyBytes
        for (index, piece) in (chunks ?? [response.bodyBytes]).enumerated() {
            if index > 0, response.delayBetweenChunks > .zero {
                flush(&pending)
                steps.append(.wait(response.delayBetweenChunks))
            }
            if chunks != nil { pending += Array(String(piece.count, radix: 16).utf8) + [13, 10] }
            var payload = piece[...]
            var cut = false
            if let left = budget {
                cut = payload.count > left
                payload = payload.prefix(left)
                budget = left - payload.count
            }
            send(payload, pending: &pending, rate: response.bytesPerSecond)
            if cut {
                flush(&pending)
                closes = true
                return
            }
            if chunks != nil { pending += [13, 10] }
        }
        if chunks != nil { pending += Array("0\r\n\r\n".utf8) }
        flush(&pending)
        if response.disconnectAfterBodyBytes != nil { closes = true }
    }

    /// Adds `payload` after `pending` (framing bytes waiting to go with it), in slices with waits when throttled:
    /// a wait before every slice but the body's first, as long as the slice takes at the rate.
    private mutating func send(_ payload: ArraySlice<UInt8>, pending: inout [UInt8], rate: Int?) {
        guard let rate else {
            pending += payload
            bodyBytesSent += payload.count
            return
        }
        let sliceSize = max(1, rate / Self.slicesPerSecond)
        var rest = payload
        while !rest.isEmpty {
            let slice = rest.prefix(sliceSize)
            rest = rest.dropFirst(slice.count)
            if bodyBytesSent > 0 {
                flush(&pending)
                steps.append(.wait(.nanoseconds(Int64(slice.count) * 1_000_000_000 / Int64(rate))))
            }
            pending += slice
            bodyBytesSent += slice.count
        }
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
