internal import CourierCore

/// What a response head's fields say about its body's framing and its connection (RFC 9112 §6.3, §9.6):
/// `Content-Length`, `Transfer-Encoding` and `Connection`, noted while the head's field section is read.
struct ResponseFraming: Sendable {
    /// The fields that decide framing.
    enum Field: Sendable {
        case contentLength, transferEncoding, connection

        /// The framing field called `name` (ASCII case-insensitive), if it is one.
        init?(name: UnsafeBufferPointer<UInt8>) {
            switch name.count {
            case 14 where equalsLowercase(name, 0, "content-length"): self = .contentLength
            case 17 where equalsLowercase(name, 0, "transfer-encoding"): self = .transferEncoding
            case 10 where equalsLowercase(name, 0, "connection"): self = .connection
            default: return nil
            }
        }
    }

    var contentLength: Int?
    /// `Transfer-Encoding` field lines seen, and whether all of them (joined) say exactly `chunked`.
    var transferEncodingCount = 0
    var transferEncodingIsChunked = false
    /// The raw `Transfer-Encoding` values, joined with commas, for the error message.
    var transferEncodings = ""
    /// A `Connection` field holds the `close` token.
    var connectionClose = false

    /// Notes what the value of a framing field says; returns the reason when it is invalid or conflicts with an
    /// earlier field.
    mutating func note(_ field: Field, _ value: UnsafeBufferPointer<UInt8>) -> ResponseParseError.Reason? {
        switch field {
        case .contentLength:
            guard let length = parseContentLength(value) else { return .invalidContentLength }
            if length < 0 { return .conflictingContentLength }
            if let previous = contentLength, previous != length { return .conflictingContentLength }
            contentLength = length
        case .transferEncoding:
            transferEncodingCount += 1
            transferEncodingIsChunked = transferEncodingCount == 1 && value.count == 7 && equalsLowercase(value, 0, "chunked")
            let text = string(value, 0, value.count)
            transferEncodings += transferEncodingCount == 1 ? text : "," + text
        case .connection:
            if listContainsClose(value) { connectionClose = true }
        }
        return nil
    }

    /// Notes the framing fields of a head's field section as its reader adds them.
    struct Observer: FieldSectionReader.Observer {
        private(set) var framing = ResponseFraming()
        /// When the last field line decides framing: which field, and the framing as it was before it, so that
        /// an obs-fold continuing that field reads the whole unfolded value again.
        private var lastField: (field: Field, before: ResponseFraming)?

        mutating func fieldAdded(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) -> ResponseParseError.Reason? {
            let field = Field(name: name)
            lastField = field.map { ($0, framing) }
            guard let field else { return nil }
            return framing.note(field, value)
        }

        mutating func lastFieldContinued(with continuation: UnsafeBufferPointer<UInt8>, in fields: HTTPHeaders)
            -> ResponseParseError.Reason?
        {
            guard let (field, before) = lastField, !continuation.isEmpty else { return nil }
            var unfolded = before
            let reason = fields.withLastValue { unfolded.note(field, $0) } ?? nil
            framing = unfolded
            return reason
        }
    }
}

/// `1*DIGIT` or a comma-separated list of identical ones (RFC 9110 §8.6); nil when invalid, -1 when the list
/// holds different values.
private func parseContentLength(_ p: UnsafeBufferPointer<UInt8>) -> Int? {
    let end = p.count
    var result: Int?
    var i = 0
    while true {
        while i < end, p[i] == sp || p[i] == tab { i += 1 }
        var value = 0
        var digits = 0
        while i < end, isDigit(p[i]) {
            let (shifted, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = shifted.addingReportingOverflow(Int(p[i] &- zero))
            if o1 || o2 { return nil }
            value = sum
            digits += 1
            i += 1
        }
        if digits == 0 { return nil }
        if let r = result, r != value { return -1 }
        result = value
        while i < end, p[i] == sp || p[i] == tab { i += 1 }
        if i == end { return result }
        guard p[i] == UInt8(ascii: ",") else { return nil }
        i += 1
    }
}

/// Whether the comma-separated list in `p` holds the token `close` (ASCII case-insensitive).
private func listContainsClose(_ p: UnsafeBufferPointer<UInt8>) -> Bool {
    let end = p.count
    var i = 0
    while i < end {
        while i < end, p[i] == sp || p[i] == tab || p[i] == UInt8(ascii: ",") { i += 1 }
        let elementStart = i
        while i < end, p[i] != UInt8(ascii: ",") { i += 1 }
        var elementEnd = i
        while elementEnd > elementStart, p[elementEnd - 1] == sp || p[elementEnd - 1] == tab { elementEnd -= 1 }
        if elementEnd - elementStart == 5, equalsLowercase(p, elementStart, "close") { return true }
    }
    return false
}
