// libFuzzer target for CourierHTTP1's ResponseParser (and ContentDecoder). Built by run.sh, not by SwiftPM.
//
// The first input byte chooses the mode, the request method, the limits and how the rest is split into
// feeds; the rest is the response. A crash, an ASan report, a hang (libFuzzer -timeout) or an inconsistency
// between a whole-buffer parse and a split parse is a finding.
import CourierCore
import CourierHTTP1

private enum Outcome: Equatable {
    case head(HTTPResponseHead)
    case body([UInt8])
    case trailers(HTTPHeaders)
    case end(Bool)
    case error(ResponseParseError)
}

private func run(_ pieces: [ArraySlice<UInt8>], method: HTTPMethod, limits: ResponseParser.Limits) -> [Outcome] {
    var parser = ResponseParser(requestMethod: method, limits: limits)
    var out: [Outcome] = []
    var bodyBytes = 0
    func record(_ event: ResponseEvent) {
        switch event {
        case .head(let h): out.append(.head(h))
        case .body(let b):
            bodyBytes += b.count
            if case .body(let previous) = out.last { out[out.count - 1] = .body(previous + b) } else { out.append(.body(Array(b))) }
        case .trailers(let t): out.append(.trailers(t))
        case .end(let k): out.append(.end(k))
        }
    }
    do {
        for piece in pieces {
            parser.feed(piece)
            var guardCount = 0
            while let event = try parser.next() {
                record(event)
                guardCount += 1
                precondition(guardCount <= piece.count + 4, "parser produced events without consuming bytes")
                if case .end(true) = event, parser.isIdle { parser.expectResponse(to: method) }
            }
        }
        parser.eof()
        while let event = try parser.next() { record(event) }
    } catch {
        out.append(.error(error))
    }
    precondition(bodyBytes <= pieces.reduce(0) { $0 + $1.count }, "more body bytes than input")
    return out
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let control = data[0]
    let input = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))

    if control & 0x80 != 0 {
        // ContentDecoder: any bytes, any split, bounded output.
        let coding: ContentCoding = control & 1 == 0 ? .gzip : .deflate
        guard let decoder = try? ContentDecoder(coding: coding, maxDecodedBytes: 1 << 20) else { return 0 }
        let step = Int(control >> 1 & 0x0F) + 1
        var start = 0
        do {
            while start < input.count {
                let end = min(input.count, start + step)
                _ = try decoder.decode(input[start..<end])
                start = end
            }
            try decoder.finish()
        } catch {}
        return 0
    }

    let methods: [HTTPMethod] = [.get, .head, .post, .connect]
    let method = methods[Int(control & 0x03)]
    let limits =
        control & 0x04 == 0
        ? ResponseParser.Limits()
        : ResponseParser.Limits(maxHeadBytes: 128, maxHeaderCount: 4, maxChunkExtensionBytes: 8, maxTrailerBytes: 32, maxInterimResponses: 1)
    let step = Int(control >> 3 & 0x0F) + 1

    let whole = run([input[...]], method: method, limits: limits)
    var pieces: [ArraySlice<UInt8>] = []
    var start = 0
    while start < input.count {
        let end = min(input.count, start + step)
        pieces.append(input[start..<end])
        start = end
    }
    let split = run(pieces, method: method, limits: limits)
    precondition(whole == split, "split parse differs: \(whole) vs \(split)")
    return 0
}
