// libFuzzer target for CourierHTTP1's ContentDecoder. Built and run by Fuzz/run.sh (docs/fuzzing.md).
//
// The first input byte chooses the coding, the limit and how the rest is split into feeds; the rest is the
// encoded body. Properties: the decoded size never exceeds the limit (and, without an error, the decoder's own
// count agrees with what it returned); a whole-buffer decode and a split decode give the same error, and the same bytes (up to
// the error, where there is one).
internal import CourierHTTP1

private struct Outcome {
    var bytes: [UInt8] = []
    var error: ContentDecodingError?
}

private func decode(_ pieces: [ArraySlice<UInt8>], coding: ContentCoding, limit: Int) -> Outcome {
    var outcome = Outcome()
    let decoder: ContentDecoder
    do {
        decoder = try ContentDecoder(coding: coding, maxDecodedBytes: limit)
    } catch {
        preconditionFailure("the decoder did not start: \(error)")
    }
    do {
        for piece in pieces {
            outcome.bytes += try decoder.decode(piece)
            precondition(outcome.bytes.count <= limit, "decoded \(outcome.bytes.count) bytes, over the \(limit)-byte limit")
        }
        try decoder.finish()
    } catch {
        outcome.error = error
    }
    precondition(decoder.decodedByteCount <= limit, "decodedByteCount \(decoder.decodedByteCount) is over the \(limit)-byte limit")
    // A call that throws returns nothing, so only a decode without error has returned all it counted.
    if outcome.error == nil {
        precondition(decoder.decodedByteCount == outcome.bytes.count, "decodedByteCount disagrees with the bytes returned")
    }
    return outcome
}

/// One input through the harness: libFuzzer's `LLVMFuzzerTestOneInput`, reached through `FuzzTarget`.
func fuzzDecoder(_ data: UnsafeBufferPointer<UInt8>) {
    guard let input = FuzzInput(data) else { return }
    let control = input.control
    let coding: ContentCoding = control & 1 == 0 ? .gzip : .deflate
    // A small limit sometimes, so that decompression bombs reach it within the input sizes libFuzzer tries.
    let limit = control & 2 == 0 ? 1 << 20 : 64
    let step = Int(control >> 2 & 0x3F) + 1

    let whole = decode([input.payload[...]], coding: coding, limit: limit)
    let split = decode(input.pieces(step: step), coding: coding, limit: limit)
    // The same error; the same bytes when there is none (before an error, each returns what it had decoded).
    precondition(whole.error == split.error, "split decode fails differently: \(String(describing: whole.error)) vs \(String(describing: split.error))")
    if whole.error == nil {
        precondition(whole.bytes == split.bytes, "split decode gives other bytes")
    } else {
        let shorter = min(whole.bytes.count, split.bytes.count)
        precondition(whole.bytes.prefix(shorter) == split.bytes.prefix(shorter), "split decode gives other bytes before the error")
    }
}
