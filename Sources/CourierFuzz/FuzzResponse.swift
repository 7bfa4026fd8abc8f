// libFuzzer target for CourierHTTP1's ResponseParser. Built and run by Fuzz/run.sh (docs/fuzzing.md).
//
// The first input byte chooses the request method, the limits and how the rest is split into feeds; the rest
// is the response. Properties, each a precondition (a finding when broken): a whole-buffer parse and a split
// parse give the same events and error; a parser that threw throws the same error again; no event without
// consuming bytes; never more body bytes than input. Crashes, ASan reports and hangs (-timeout) are findings.
internal import CourierCore
internal import CourierHTTP1

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
        // A failed parser keeps failing with the same error.
        do {
            _ = try parser.next()
            preconditionFailure("a failed parser produced an event")
        } catch let again {
            precondition(again == error, "the error changed: \(error) then \(again)")
        }
    }
    precondition(bodyBytes <= pieces.reduce(0) { $0 + $1.count }, "more body bytes than input")
    return out
}

/// One input through the harness: libFuzzer's `LLVMFuzzerTestOneInput`, reached through `FuzzTarget`.
func fuzzResponse(_ data: UnsafeBufferPointer<UInt8>) {
    guard let input = FuzzInput(data) else { return }
    let control = input.control

    let methods: [HTTPMethod] = [.get, .head, .post, .connect]
    let method = methods[Int(control & 0x03)]
    let limits =
        control & 0x04 == 0
        ? ResponseParser.Limits()
        : ResponseParser.Limits(maxHeadBytes: 128, maxHeaderCount: 4, maxChunkExtensionBytes: 8, maxTrailerBytes: 32, maxInterimResponses: 1)
    let step = Int(control >> 3 & 0x1F) + 1

    let whole = run([input.payload[...]], method: method, limits: limits)
    let split = run(input.pieces(step: step), method: method, limits: limits)
    precondition(whole == split, "split parse differs: \(whole) vs \(split)")
}
