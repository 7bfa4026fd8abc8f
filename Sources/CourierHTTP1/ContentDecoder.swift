internal import CCourierZlib

/// Streaming gzip / deflate decoding through the system's zlib, with a bound on the decoded size.
///
/// Feed the compressed body in any pieces with ``decode(_:)`` and get decoded bytes back; call ``finish()`` when
/// the body ended to learn whether the compressed stream was complete. A body with no bytes at all is accepted
/// as empty. Concatenated gzip members (RFC 1952 §2.2) are decoded one after the other; any other byte after the
/// end of the stream is an error. One decoder per body; it owns its zlib state and frees it in `deinit`.
///
/// Not thread-safe: one reader uses it at a time (it is `Sendable` so that a body's reader can carry it between
/// tasks, e.g. a streaming reader that keeps it under its lock between reads).
package final class ContentDecoder: @unchecked Sendable {
    /// The coding being decoded.
    package let coding: ContentCoding
    /// The largest decoded body accepted, in bytes.
    package let maxDecodedBytes: Int
    /// Decoded bytes produced so far.
    package private(set) var decodedByteCount = 0
    /// Compressed bytes consumed so far.
    package private(set) var encodedByteCount = 0

    private let stream: UnsafeMutablePointer<z_stream>
    private var initialized = false
    private var streamEnded = false
    /// The first byte of a deflate body, kept until the second tells zlib-wrapped from raw.
    private var pendingFirstByte: UInt8?
    private var scratch: [UInt8]

    /// A decoder for `coding` that refuses to produce more than `maxDecodedBytes` bytes.
    package init(coding: ContentCoding, maxDecodedBytes: Int) throws(ContentDecodingError) {
        self.coding = coding
        self.maxDecodedBytes = maxDecodedBytes
        self.stream = .allocate(capacity: 1)
        self.stream.initialize(to: z_stream())
        self.scratch = [UInt8](repeating: 0, count: 32 * 1024)
        if coding == .gzip {
            // 15 + 32: a gzip or zlib header, detected automatically.
            try start(windowBits: 15 + 32)
        }
    }

    deinit {
        if initialized { inflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Decodes the next piece of the compressed body and returns the bytes it completes (possibly none).
    package func decode(_ input: ArraySlice<UInt8>) throws(ContentDecodingError) -> [UInt8] {
        guard !input.isEmpty else { return [] }
        var input = input
        if !initialized {
            // deflate: choose zlib-wrapped or raw from the first two bytes (RFC 1950 §2.2 header check).
            guard let first = pendingFirstByte ?? input.first else { return [] }
            if pendingFirstByte == nil { input = input.dropFirst() }
            guard let second = input.first else {
                pendingFirstByte = first
                return []
            }
            let isZlib = first & 0x0F == 8 && first >> 4 <= 7 && (UInt16(first) << 8 | UInt16(second)) % 31 == 0
            try start(windowBits: isZlib ? 15 : -15)
            pendingFirstByte = nil
            var output = try inflate([first])
            output += try inflate(input)
            return output
        }
        return try inflate(input)
    }

    /// Decodes the next piece of the compressed body.
    package func decode(_ input: [UInt8]) throws(ContentDecodingError) -> [UInt8] { try decode(input[...]) }

    /// Checks that the compressed stream ended. Throws ``ContentDecodingError/Reason/truncatedStream`` when the
    /// body stopped in the middle of it.
    package func finish() throws(ContentDecodingError) {
        if encodedByteCount == 0 && pendingFirstByte == nil { return }
        guard streamEnded else { throw ContentDecodingError(.truncatedStream, coding: coding) }
    }

    private func start(windowBits: Int32) throws(ContentDecodingError) {
        let rc = inflateInit2_(stream, windowBits, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard rc == Z_OK else { throw ContentDecodingError(.zlibFailure(code: rc), coding: coding) }
        initialized = true
    }

    private func inflate(_ input: some Collection<UInt8>) throws(ContentDecodingError) -> [UInt8] {
        var output: [UInt8] = []
        var failure: ContentDecodingError?
        let done: Void? = input.withContiguousStorageIfAvailable { bytes in
            failure = inflate(UnsafeRawBufferPointer(bytes), into: &output)
        }
        if done == nil {
            let copy = Array(input)
            copy.withUnsafeBytes { failure = inflate($0, into: &output) }
        }
        if let failure { throw failure }
        return output
    }

    private func inflate(_ input: UnsafeRawBufferPointer, into output: inout [UInt8]) -> ContentDecodingError? {
        guard let base = input.baseAddress, !input.isEmpty else { return nil }
        if streamEnded {
            // Only another gzip member may follow the end of a stream.
            guard coding == .gzip, input[0] == 0x1F else { return ContentDecodingError(.trailingData, coding: coding) }
            inflateReset(stream)
            streamEnded = false
        }
        var offset = 0
        let scratchCount = scratch.count
        while offset < input.count {
            let piece = min(input.count - offset, Int(UInt32.max))
            stream.pointee.next_in = UnsafeMutablePointer(mutating: base.advanced(by: offset).assumingMemoryBound(to: Bytef.self))
            stream.pointee.avail_in = UInt32(piece)
            while true {
                let (rc, produced) = scratch.withUnsafeMutableBufferPointer { out in
                    stream.pointee.next_out = out.baseAddress
                    stream.pointee.avail_out = UInt32(scratchCount)
                    let rc = CCourierZlib.inflate(stream, Z_NO_FLUSH)
                    return (rc, scratchCount - Int(stream.pointee.avail_out))
                }
                if produced > 0 {
                    if decodedByteCount + produced > maxDecodedBytes {
                        return ContentDecodingError(.decodedBodyTooLarge(limit: maxDecodedBytes), coding: coding)
                    }
                    decodedByteCount += produced
                    output.append(contentsOf: scratch[0..<produced])
                }
                let left = Int(stream.pointee.avail_in)
                switch rc {
                case Z_OK, Z_BUF_ERROR:
                    // Z_BUF_ERROR: no progress possible without more input; not an error while streaming.
                    if left == 0 && stream.pointee.avail_out != 0 { break }
                    if rc == Z_BUF_ERROR && produced == 0 { break }
                    continue
                case Z_STREAM_END:
                    if left > 0, coding == .gzip,
                        stream.pointee.next_in.pointee == 0x1F
                    {
                        // Another gzip member follows.
                        inflateReset(stream)
                        continue
                    }
                    if left > 0 { return ContentDecodingError(.trailingData, coding: coding) }
                    streamEnded = true
                case Z_DATA_ERROR, Z_NEED_DICT, Z_STREAM_ERROR:
                    let message = stream.pointee.msg.map { String(cString: $0) } ?? "invalid data"
                    return ContentDecodingError(.corruptStream(message), coding: coding)
                default:
                    return ContentDecodingError(.zlibFailure(code: rc), coding: coding)
                }
                break
            }
            encodedByteCount += piece - Int(stream.pointee.avail_in)
            offset += piece
            if streamEnded && offset < input.count {
                return ContentDecodingError(.trailingData, coding: coding)
            }
        }
        return nil
    }
}
