// libFuzzer target for CourierHTTP1's RequestParser (what CourierTesting's MockServer reads requests with). Built
// and run by Fuzz/run.sh (docs/fuzzing.md).
//
// The first input byte chooses small or default limits and the feed size; the rest is what a client sent.
// Properties, each a precondition: a whole-buffer parse and a split parse give the same events and error; a parser
// that threw throws the same error again; the status it asks for is one a server sends for a refusal; never more
// body bytes than input, nor than the body limit per request. Crashes, ASan reports and hangs are findings.
internal import CourierCore
internal import CourierHTTP1

private enum RequestOutcome: Equatable {
    case head(HTTPRequestHead, minor: Int)
    case body([UInt8])
    case end(keepAlive: Bool)
    case refused(RequestParseError)
}

private func parseRequests(_ pieces: [ArraySlice<UInt8>], limits: RequestParser.Limits) -> [RequestOutcome] {
    var parser = RequestParser(limits: limits)
    var outcomes: [RequestOutcome] = []
    var total = 0
    var perRequest = 0
    func note(_ event: RequestEvent) {
        switch event {
        case .head(let head, let version):
            perRequest = 0
            outcomes.append(.head(head, minor: version.minor))
        case .body(let bytes):
            total += bytes.count
            perRequest += bytes.count
            precondition(perRequest <= limits.maxBodyBytes, "a body over the limit came out")
            if case .body(let earlier) = outcomes.last {
                outcomes[outcomes.count - 1] = .body(earlier + bytes)
            } else {
                outcomes.append(.body(Array(bytes)))
            }
        case .end(let keepAlive):
            outcomes.append(.end(keepAlive: keepAlive))
        }
    }
    do {
        for piece in pieces {
            parser.feed(piece)
            while let event = try parser.next() { note(event) }
        }
        parser.eof()
        while let event = try parser.next() { note(event) }
    } catch {
        outcomes.append(.refused(error))
        precondition([400, 413, 431, 501, 505].contains(error.status), "refused with \(error.status)")
        do {
            _ = try parser.next()
            preconditionFailure("a refusing parser went on")
        } catch let again {
            precondition(again == error, "the error changed: \(error) then \(again)")
        }
    }
    precondition(total <= pieces.reduce(0) { $0 + $1.count }, "more body bytes than input")
    return outcomes
}

/// One input through the harness: libFuzzer's `LLVMFuzzerTestOneInput`, reached through `FuzzTarget`.
func fuzzRequest(_ data: UnsafeBufferPointer<UInt8>) {
    guard let input = FuzzInput(data) else { return }
    let limits =
        input.control & 0x01 == 0
        ? RequestParser.Limits()
        : RequestParser.Limits(maxHeadBytes: 128, maxHeaderCount: 4, maxBodyBytes: 64, maxChunkExtensionBytes: 8, maxTrailerBytes: 32)
    let step = Int(input.control >> 1 & 0x3F) + 1
    let whole = parseRequests([input.payload[...]], limits: limits)
    let split = parseRequests(input.pieces(step: step), limits: limits)
    precondition(whole == split, "split parse differs: \(whole) vs \(split)")
}
