package import CourierCore

/// Writes HTTP/1.1 requests (RFC 9112) into a byte buffer: the head, then the body parts, then the end.
///
/// Every request is `writeHead`, zero or more `writeBodyPart`, then `writeEnd` (which writes nothing for a
/// body without chunked framing but checks that a `Content-Length` body was complete). Everything a head
/// contains is validated before the first byte is appended, so a refused head leaves `buffer` untouched.
///
/// ```swift
/// var encoder = RequestEncoder()
/// var out: [UInt8] = []
/// try encoder.writeHead(head, host: url.hostHeader, body: .chunked, into: &out)
/// try encoder.writeBodyPart(part, into: &out)
/// try encoder.writeEnd(into: &out)
/// ```
package struct RequestEncoder: Sendable {
    private enum State: Sendable {
        case idle
        case noBody
        case fixed(declared: Int, remaining: Int)
        case chunked
    }

    private var state: State = .idle

    package init() {}

    /// Whether a request is in progress (its head written, its end not yet).
    package var isWritingRequest: Bool {
        if case .idle = state { return false }
        return true
    }

    /// Writes the request line and header section. Adds `Host: host` when the head has no `Host` field and the
    /// framing header `body` asks for. Throws, writing nothing, when the method, target, host or any header is
    /// invalid or when the head already has a framing header.
    package mutating func writeHead(
        _ head: HTTPRequestHead,
        host: String,
        body: RequestBodyFraming,
        into buffer: inout [UInt8]
    ) throws(RequestEncodingError) {
        precondition(!isWritingRequest, "writeHead(_:host:body:into:) before the previous request's writeEnd")
        guard head.method.isValidToken else { throw RequestEncodingError(.invalidMethod(head.method.rawValue)) }
        guard !head.target.isEmpty, head.target.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw RequestEncodingError(.invalidTarget(head.target))
        }
        var hasHost = false
        var problem: RequestEncodingError.Reason?
        head.headers.forEachField { name, value in
            guard problem == nil else { return }
            guard HTTPHeaders.isValidName(bytes: name) else {
                problem = .invalidHeaderName(String(decoding: name, as: UTF8.self))
                return
            }
            guard HTTPHeaders.isValidValue(bytes: value) else {
                problem = .invalidHeaderValue(name: String(decoding: name, as: UTF8.self))
                return
            }
            if equalsIgnoringCase(name, "content-length") || equalsIgnoringCase(name, "transfer-encoding") {
                problem = .framingHeaderSupplied(String(decoding: name, as: UTF8.self))
            } else if equalsIgnoringCase(name, "host") {
                hasHost = true
            }
        }
        if let problem { throw RequestEncodingError(problem) }
        if !hasHost {
            guard !host.isEmpty, host.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                throw RequestEncodingError(.invalidHost(host))
            }
        }
        if case .contentLength(let n) = body, n < 0 { throw RequestEncodingError(.negativeContentLength(n)) }

        // Validated: from here on nothing can fail.
        buffer.reserveCapacity(buffer.count + 64 + head.target.utf8.count + head.headers.count * 32)
        buffer.append(contentsOf: head.method.rawValue.utf8)
        buffer.append(space)
        buffer.append(contentsOf: head.target.utf8)
        buffer.append(contentsOf: versionAndCRLF)
        if !hasHost {
            buffer.append(contentsOf: hostPrefix)
            buffer.append(contentsOf: host.utf8)
            buffer.append(contentsOf: crlf)
        }
        head.headers.forEachField { name, value in
            buffer.append(contentsOf: name)
            buffer.append(contentsOf: colonSpace)
            buffer.append(contentsOf: value)
            buffer.append(contentsOf: crlf)
        }
        switch body {
        case .none:
            let method = head.method.rawValue
            if method == "POST" || method == "PUT" || method == "PATCH" {
                buffer.append(contentsOf: contentLengthPrefix)
                buffer.append(UInt8(ascii: "0"))
                buffer.append(contentsOf: crlf)
            }
            state = .noBody
        case .contentLength(let n):
            buffer.append(contentsOf: contentLengthPrefix)
            buffer.append(contentsOf: String(n).utf8)
            buffer.append(contentsOf: crlf)
            state = .fixed(declared: n, remaining: n)
        case .chunked:
            buffer.append(contentsOf: chunkedHeader)
            state = .chunked
        }
        buffer.append(contentsOf: crlf)
    }

    /// Writes one part of the body: as is for a `Content-Length` body, as one chunk for a chunked body (an empty
    /// part writes nothing, since an empty chunk would end the body).
    package mutating func writeBodyPart(
        _ bytes: some Collection<UInt8>,
        into buffer: inout [UInt8]
    ) throws(RequestEncodingError) {
        switch state {
        case .idle:
            preconditionFailure("writeBodyPart(_:into:) without writeHead")
        case .noBody:
            if !bytes.isEmpty { throw RequestEncodingError(.bodyWithoutFraming) }
        case .fixed(let declared, let remaining):
            guard bytes.count <= remaining else { throw RequestEncodingError(.bodyLongerThanDeclared(declared: declared)) }
            buffer.append(contentsOf: bytes)
            state = .fixed(declared: declared, remaining: remaining - bytes.count)
        case .chunked:
            let count = bytes.count
            guard count > 0 else { return }
            buffer.reserveCapacity(buffer.count + count + 20)
            appendHex(count, to: &buffer)
            buffer.append(contentsOf: crlf)
            buffer.append(contentsOf: bytes)
            buffer.append(contentsOf: crlf)
        }
    }

    /// Ends the request: the last chunk and optional trailers for a chunked body; a check that a `Content-Length`
    /// body was complete otherwise.
    package mutating func writeEnd(
        trailers: HTTPHeaders = HTTPHeaders(),
        into buffer: inout [UInt8]
    ) throws(RequestEncodingError) {
        switch state {
        case .idle:
            preconditionFailure("writeEnd(trailers:into:) without writeHead")
        case .noBody, .fixed:
            guard trailers.isEmpty else { throw RequestEncodingError(.trailersWithoutChunkedBody) }
            if case .fixed(let declared, let remaining) = state, remaining > 0 {
                throw RequestEncodingError(.bodyShorterThanDeclared(declared: declared, written: declared - remaining))
            }
        case .chunked:
            for field in trailers {
                guard HTTPHeaders.isValidName(field.name) else {
                    throw RequestEncodingError(.invalidHeaderName(field.name))
                }
                guard HTTPHeaders.isValidValue(field.value) else {
                    throw RequestEncodingError(.invalidHeaderValue(name: field.name))
                }
            }
            buffer.append(UInt8(ascii: "0"))
            buffer.append(contentsOf: crlf)
            for field in trailers {
                buffer.append(contentsOf: field.name.utf8)
                buffer.append(contentsOf: colonSpace)
                buffer.append(contentsOf: field.value.utf8)
                buffer.append(contentsOf: crlf)
            }
            buffer.append(contentsOf: crlf)
        }
        state = .idle
    }

    /// Abandons the request in progress (the connection it was written to is being closed).
    package mutating func reset() { state = .idle }
}

private let space = UInt8(ascii: " ")
private let crlf: [UInt8] = [0x0D, 0x0A]
private let colonSpace: [UInt8] = [UInt8(ascii: ":"), space]
private let versionAndCRLF: [UInt8] = Array(" HTTP/1.1\r\n".utf8)
private let hostPrefix: [UInt8] = Array("Host: ".utf8)
private let contentLengthPrefix: [UInt8] = Array("Content-Length: ".utf8)
private let chunkedHeader: [UInt8] = Array("Transfer-Encoding: chunked\r\n".utf8)

/// Whether `bytes` equals `lowercase` (lower-case ASCII) ignoring ASCII case.
private func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ lowercase: StaticString) -> Bool {
    guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
    let expected = lowercase.utf8Start
    for k in 0..<bytes.count where bytes[k] | 0x20 != expected[k] { return false }
    return true
}

private func appendHex(_ value: Int, to buffer: inout [UInt8]) {
    let digits: StaticString = "0123456789abcdef"
    var shift = (Int.bitWidth - value.leadingZeroBitCount + 3) / 4 * 4 - 4
    while shift >= 0 {
        buffer.append(digits.utf8Start[(value >> shift) & 0xF])
        shift -= 4
    }
}
