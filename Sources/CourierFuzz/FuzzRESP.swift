// libFuzzer target for CourierRedis's RESPParser and RESPEncoder. Built and run by Fuzz/run.sh (docs/fuzzing.md).
//
// The first input byte chooses the limits (tight or default) and how the rest is split into feeds; the rest is
// what a Redis server sent. Properties, each a precondition (a finding when broken): a whole-buffer parse and a
// split parse give the same replies and the same error; a parser that threw throws the same error again; every
// reply re-encodes to bytes that parse back to exactly one reply with the same encoding; replies never hold more
// bulk bytes than the input. Crashes, ASan reports, hangs (-timeout) and memory blow-ups (-rss_limit_mb) are
// findings too: a hostile length must not allocate what it announces.
internal import CourierRedis

private struct Outcome {
    var replies: [RESPValue] = []
    var error: RESPParseError?

    /// The replies' encodings: compared instead of the values, so that a NaN double equals itself.
    var encoded: [[UInt8]] { replies.map(RESPEncoder.encode) }
}

private func parse(_ pieces: [ArraySlice<UInt8>], limits: RESPParser.Limits) -> Outcome {
    var parser = RESPParser(limits: limits)
    var outcome = Outcome()
    do {
        for piece in pieces {
            parser.feed(piece)
            while let reply = try parser.next() { outcome.replies.append(reply) }
        }
    } catch {
        outcome.error = error
        do {
            _ = try parser.next()
            preconditionFailure("a parser that threw \(error) did not throw again")
        } catch let again {
            precondition(again == error, "a parser that threw \(error) then threw \(again)")
        }
    }
    return outcome
}

private func bulkBytes(_ value: RESPValue) -> Int {
    switch value {
    case .bulkString(let bytes), .blobError(let bytes): return bytes.count
    case .verbatimString(_, let text): return text.count + 4
    case .array(let elements), .set(let elements), .push(let elements): return elements.reduce(0) { $0 + bulkBytes($1) }
    case .map(let entries): return entries.reduce(0) { $0 + bulkBytes($1.key) + bulkBytes($1.value) }
    default: return 0
    }
}

/// One input through the harness: libFuzzer's `LLVMFuzzerTestOneInput`, reached through `FuzzTarget`.
func fuzzRESP(_ data: UnsafeBufferPointer<UInt8>) {
    guard let input = FuzzInput(data) else { return }
    let limits = input.control & 0x80 != 0
        ? RESPParser.Limits(maxBulkLength: 64, maxAggregateLength: 8, maxDepth: 3, maxLineLength: 32)
        : RESPParser.Limits()
    let step = Int(input.control & 0x0F) + 1
    let whole = parse([input.payload[...]], limits: limits)
    let split = parse(input.pieces(step: step), limits: limits)
    precondition(whole.encoded == split.encoded, "whole and split (\(step)-byte) feeds gave different replies")
    precondition(whole.error == split.error, "whole and split feeds failed differently: \(String(describing: whole.error)) vs \(String(describing: split.error))")
    precondition(whole.replies.reduce(0) { $0 + bulkBytes($1) } <= input.payload.count, "more bulk bytes than input")
    for reply in whole.replies {
        let bytes = RESPEncoder.encode(reply)
        let again = parse([bytes[...]], limits: RESPParser.Limits())
        precondition(again.error == nil, "a reply re-encoded does not parse: \(String(describing: again.error))")
        precondition(again.replies.count == 1, "a reply re-encoded parses to \(again.replies.count) replies")
        precondition(again.encoded == [bytes], "a reply re-encoded parses to another reply")
    }
}
