/// A response violated HTTP/1.1 framing (RFC 9112), one of ``ResponseParser/Limits`` was exceeded, or the
/// connection ended before the message did. The connection cannot be used any more once this is thrown.
package struct ResponseParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    package enum Reason: Hashable, Sendable {
        /// The status line is not `HTTP/x.y SP 3DIGIT [SP reason]`.
        case invalidStatusLine
        /// The version is not HTTP/1.x.
        case unsupportedVersion
        /// The status code is not a number in 100...599.
        case invalidStatusCode
        /// `101 Switching Protocols`: Courier never asks for an upgrade, so it cannot accept one.
        case switchingProtocolsNotSupported
        /// A field name is empty or holds a byte that is not a `tchar`.
        case invalidHeaderName
        /// A field value holds a control byte (NUL, a bare CR, DEL, ...).
        case invalidHeaderValue
        /// Whitespace between a field name and its colon (RFC 9112 §5.1 requires rejecting it).
        case whitespaceBeforeColon
        /// A field line without a colon.
        case missingColon
        /// A field line starting with whitespace (obsolete line folding, RFC 9112 §5.2).
        case obsoleteLineFolding
        /// A line ended with LF alone; Courier requires CRLF everywhere.
        case bareLineFeed
        /// Status line plus header section is larger than the limit (bytes).
        case headTooLarge(limit: Int)
        /// More header field lines than the limit.
        case tooManyHeaders(limit: Int)
        /// More 1xx interim responses before the final one than the limit.
        case tooManyInterimResponses(limit: Int)
        /// A `Content-Length` value that is not a non-negative decimal number that fits in `Int`.
        case invalidContentLength
        /// Two different `Content-Length` values.
        case conflictingContentLength
        /// Both `Transfer-Encoding` and `Content-Length` (RFC 9112 §6.3 rule 3: smuggling risk).
        case contentLengthWithTransferEncoding
        /// A `Transfer-Encoding` that is not exactly `chunked` (the coding named is given).
        case unsupportedTransferEncoding(String)
        /// `Transfer-Encoding` in an HTTP/1.0 response: its framing is faulty (RFC 9112 §6.1).
        case transferEncodingInHTTP10
        /// A chunk-size line without hex digits or with bytes that are not hex digits or an extension.
        case invalidChunkSize
        /// A chunk size larger than `Int.max`.
        case chunkSizeOverflow
        /// A chunk extension with control bytes or not starting with `;`.
        case invalidChunkExtension
        /// A chunk-size line whose extension part is longer than the limit (bytes).
        case chunkExtensionTooLong(limit: Int)
        /// Chunk data not followed by CRLF.
        case missingChunkTerminator
        /// The trailer section is larger than the limit (bytes).
        case trailersTooLarge(limit: Int)
        /// The connection closed before any byte of the response arrived.
        case closedBeforeResponse
        /// The connection closed in the middle of the status line or header section.
        case truncatedHead
        /// The connection closed before the body was complete; `missing` is the number of bytes still
        /// expected when the length was known (`Content-Length`, or inside a chunk).
        case truncatedBody(missing: Int?)
    }

    /// What went wrong.
    package var reason: Reason
    /// The byte offset of the offending byte from the first byte of the response (1xx interim responses
    /// included), when it is useful; for end-of-stream errors, the number of bytes the response had.
    package var offset: Int?

    package init(_ reason: Reason, offset: Int? = nil) {
        self.reason = reason
        self.offset = offset
    }

    package var description: String {
        let at = offset.map { " at byte \($0)" } ?? ""
        return "HTTP/1.1 response: \(message)\(at)"
    }

    /// The rule broken, without the "HTTP/1.1 response" prefix (the request parser shares these rules).
    var message: String {
        switch reason {
        case .invalidStatusLine: return "invalid status line"
        case .unsupportedVersion: return "unsupported HTTP version (only HTTP/1.x)"
        case .invalidStatusCode: return "invalid status code (must be 100...599)"
        case .switchingProtocolsNotSupported: return "101 Switching Protocols received but no upgrade was requested"
        case .invalidHeaderName: return "invalid header field name"
        case .invalidHeaderValue: return "invalid byte in header field value"
        case .whitespaceBeforeColon: return "whitespace between header field name and colon"
        case .missingColon: return "header field line without a colon"
        case .obsoleteLineFolding: return "obsolete line folding (field line starts with whitespace)"
        case .bareLineFeed: return "line ends with LF without CR"
        case .headTooLarge(let limit): return "status line and headers exceed \(limit) bytes"
        case .tooManyHeaders(let limit): return "more than \(limit) header fields"
        case .tooManyInterimResponses(let limit): return "more than \(limit) 1xx interim responses"
        case .invalidContentLength: return "invalid Content-Length"
        case .conflictingContentLength: return "conflicting Content-Length values"
        case .contentLengthWithTransferEncoding: return "both Transfer-Encoding and Content-Length"
        case .unsupportedTransferEncoding(let coding): return "unsupported Transfer-Encoding '\(coding)'"
        case .transferEncodingInHTTP10: return "Transfer-Encoding in an HTTP/1.0 response"
        case .invalidChunkSize: return "invalid chunk size"
        case .chunkSizeOverflow: return "chunk size overflows"
        case .invalidChunkExtension: return "invalid chunk extension"
        case .chunkExtensionTooLong(let limit): return "chunk extension exceeds \(limit) bytes"
        case .missingChunkTerminator: return "chunk data not followed by CRLF"
        case .trailersTooLarge(let limit): return "trailer section exceeds \(limit) bytes"
        case .closedBeforeResponse: return "connection closed before any response byte"
        case .truncatedHead: return "connection closed inside the response head"
        case .truncatedBody(let missing?): return "connection closed with \(missing) body bytes missing"
        case .truncatedBody(nil): return "connection closed before the end of the chunked body"
        }
    }
}
