/// A compressed response body could not be decoded.
package struct ContentDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    package enum Reason: Hashable, Sendable {
        /// The data is not a valid stream of the coding (zlib's message is kept).
        case corruptStream(String)
        /// The body ended before the compressed stream did.
        case truncatedStream
        /// Bytes after the end of the compressed stream.
        case trailingData
        /// The decoded body would be larger than the limit (bytes): a decompression bomb or an unexpected size.
        case decodedBodyTooLarge(limit: Int)
        /// zlib failed for another reason (out of memory, version mismatch); its return code is kept.
        case zlibFailure(code: Int32)
    }

    package var reason: Reason
    package var coding: ContentCoding

    package init(_ reason: Reason, coding: ContentCoding) {
        self.reason = reason
        self.coding = coding
    }

    package var description: String {
        switch reason {
        case .corruptStream(let message): return "corrupt \(coding.rawValue) body: \(message)"
        case .truncatedStream: return "\(coding.rawValue) body ended before its compressed stream"
        case .trailingData: return "bytes after the end of the \(coding.rawValue) stream"
        case .decodedBodyTooLarge(let limit): return "decoded \(coding.rawValue) body exceeds \(limit) bytes"
        case .zlibFailure(let code): return "zlib failed decoding \(coding.rawValue) (code \(code))"
        }
    }
}
