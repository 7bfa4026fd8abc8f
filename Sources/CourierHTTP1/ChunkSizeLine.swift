/// A chunk-size line refused, for the byte at `at` (from the line's first byte).
struct ChunkLineError: Error {
    var reason: ResponseParseError.Reason
    var at: Int
}

/// Reads the `chunk-size [ chunk-ext ] CRLF` line of a chunked body (RFC 9112 §7.1), which responses and
/// requests share: the response parser and the request parser both call it with the bytes at the line's start.
enum ChunkSizeLine {
    /// The line at the start of `p`, its LF looked for from `scanned` (the bytes before hold none). Nil while
    /// incomplete (`scanned` then covers all of `p`); on success the size and the index after the line's LF.
    /// The line may hold at most 64 bytes of size and whitespace besides `extLimit` bytes of extensions, so an
    /// endless line is refused before it is complete.
    static func read(
        _ p: UnsafeBufferPointer<UInt8>, scanned: inout Int, extLimit: Int
    ) -> Result<(size: Int, end: Int), ChunkLineError>? {
        let maxLine = extLimit + 64
        guard let lfIndex = indexOfLF(p, from: scanned) else {
            scanned = p.count
            if p.count > maxLine + 1 {
                return .failure(ChunkLineError(reason: .chunkExtensionTooLong(limit: extLimit), at: maxLine))
            }
            return nil
        }
        if lfIndex > maxLine + 1 {
            return .failure(ChunkLineError(reason: .chunkExtensionTooLong(limit: extLimit), at: maxLine))
        }
        guard lfIndex > 0, p[lfIndex - 1] == cr else {
            return .failure(ChunkLineError(reason: .bareLineFeed, at: lfIndex))
        }
        return size(p, end: lfIndex - 1, extLimit: extLimit).map { ($0, lfIndex + 1) }
    }

    /// `chunk-size [ chunk-ext ]` in `p[0..<end]`.
    static func size(_ p: UnsafeBufferPointer<UInt8>, end: Int, extLimit: Int) -> Result<Int, ChunkLineError> {
        var size = 0
        var i = 0
        while i < end, let digit = hexValue(p[i]) {
            let (shifted, o1) = size.multipliedReportingOverflow(by: 16)
            let (sum, o2) = shifted.addingReportingOverflow(digit)
            if o1 || o2 { return .failure(ChunkLineError(reason: .chunkSizeOverflow, at: i)) }
            size = sum
            i += 1
        }
        if i == 0 { return .failure(ChunkLineError(reason: .invalidChunkSize, at: 0)) }
        guard i < end else { return .success(size) }
        let b = p[i]
        guard b == semicolon || b == sp || b == tab else {
            return .failure(ChunkLineError(reason: .invalidChunkSize, at: i))
        }
        if end - i > extLimit {
            return .failure(ChunkLineError(reason: .chunkExtensionTooLong(limit: extLimit), at: i + extLimit))
        }
        var j = i
        while j < end, p[j] == sp || p[j] == tab { j += 1 }
        guard j < end, p[j] == semicolon else { return .failure(ChunkLineError(reason: .invalidChunkExtension, at: j)) }
        while j < end {
            let c = p[j]
            if (c < 0x20 && c != tab) || c == 0x7F { return .failure(ChunkLineError(reason: .invalidChunkExtension, at: j)) }
            j += 1
        }
        return .success(size)
    }

    @inline(__always)
    private static func hexValue(_ b: UInt8) -> Int? {
        if b &- zero < 10 { return Int(b &- zero) }
        let lower = b | 0x20
        if lower &- UInt8(ascii: "a") < 6 { return Int(lower &- UInt8(ascii: "a")) + 10 }
        return nil
    }
}
