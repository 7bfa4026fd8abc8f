internal import CourierCore

/// The request for the rest of a body that broke off after `offset` bytes: `Range: bytes=offset-` and
/// `If-Range` with the anchor's validator (RFC 9110 §14.2, §13.1.5), and the judgement of what answers it.
struct ResumeRange: Equatable, Sendable {
    /// The first byte asked for: the bytes the consumer already has.
    var offset: Int64
    var anchor: ResumeAnchor

    /// What a response to the range request is.
    enum Verdict: Equatable {
        /// A `206` whose `Content-Range` starts at ``ResumeRange/offset`` and runs to the end of the same
        /// representation: its body continues the one the consumer has.
        case continues
        /// A `206` that cannot continue the body (why, for the protocol error).
        case mismatched(String)
        /// Any other status: not a continuation (a `200` sends the whole body again).
        case notContinued
    }

    /// The `Range` and `If-Range` fields, in that order.
    var fields: [(name: String, value: String)] {
        [("Range", "bytes=\(offset)-"), ("If-Range", anchor.validator)]
    }

    /// Judges the response (`status`, `headers`) to this range request.
    func judge(status: Int, headers: HTTPHeaders) -> Verdict {
        guard status == 206 else { return .notContinued }
        guard ResumeAnchor.isIdentity(headers) else {
            return .mismatched("the 206 continuing the body has a content coding (\(headers["Content-Encoding"] ?? ""))")
        }
        guard let text = headers["Content-Range"] else {
            return .mismatched("the 206 continuing the body has no Content-Range (multiple ranges?)")
        }
        guard let range = ContentRange(text) else { return .mismatched("the 206's Content-Range '\(text)' is not bytes first-last/length") }
        guard range.first == offset else {
            return .mismatched("the 206's Content-Range '\(text)' does not start at byte \(offset), where the body broke off")
        }
        if let complete = range.complete, let known = anchor.length, complete != known {
            return .mismatched("the 206's Content-Range '\(text)' is of a \(complete)-byte representation, not the \(known) bytes first sent")
        }
        // The rest was asked for: the range runs to the representation's end.
        if let end = range.complete ?? anchor.length, range.last != end - 1 {
            return .mismatched("the 206's Content-Range '\(text)' does not run to the end of the \(end)-byte representation")
        }
        return .continues
    }
}
