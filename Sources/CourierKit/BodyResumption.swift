internal import CourierCore

/// The resumption part of a streamed load's ``LoadStateMachine``: which body the consumer is receiving, how much
/// of it it has, and whether the current attempt asks for the rest of it by byte range. Pure: the machine feeds it
/// what it learns, and turns its answers into actions.
///
/// Only a streamed `GET` (a stream's or a delegate's) whose caller set no `Range` of its own is resumed: a
/// whole-body load restarts (its partial body is not kept), and a caller's own range is the caller's to continue.
struct BodyResumption<Answer> {
    /// Whether the load resumes bodies that break off at all.
    let enabled: Bool
    /// The response whose head the consumer has and the anchor of its body (nil: that body cannot be resumed).
    private(set) var first: (answer: Answer, anchor: ResumeAnchor)?
    /// Bytes of that body the consumer has.
    private(set) var delivered: Int64 = 0
    /// What the current attempt asks for (nil: the whole body, as the caller asked).
    private(set) var asking: ResumeRange?
    /// Why the body broke off last (told to the consumer when it continues).
    private(set) var reason = ""

    init(enabled: Bool) {
        self.enabled = enabled
    }

    /// What a response to the current attempt means for the body.
    enum Answered {
        /// It continues the body from `from`: its head is `head`'s (the first response's).
        case continues(head: Answer, from: Int64, reason: String)
        /// A `206` that cannot continue it: a protocol error.
        case mismatched(String)
        /// Not a continuation (or the attempt asked for no range).
        case other
    }

    /// Judges the response (`status`, `headers`) to the current attempt.
    func answered(status: Int, headers: HTTPHeaders) -> Answered {
        guard let asking, let first else { return .other }
        switch asking.judge(status: status, headers: headers) {
        case .continues: return .continues(head: first.answer, from: asking.offset, reason: reason)
        case .mismatched(let why): return .mismatched(why)
        case .notContinued: return .other
        }
    }

    /// `answer`'s body is delivered from its first byte; `anchor` says whether it can be resumed.
    mutating func delivering(_ answer: Answer, anchor: ResumeAnchor?) {
        first = anchor.map { (answer, $0) }
        delivered = 0
        asking = nil
    }

    /// The body broke off (`reason`) with `count` more of its bytes delivered. Returns what the next attempt asks
    /// for: the rest, or nil (the body cannot be resumed, or the consumer has none of it: it simply starts again).
    mutating func brokeOff(after count: Int64, reason: String) -> ResumeRange? {
        delivered += count
        guard let first, delivered > 0, first.anchor.length.map({ delivered < $0 }) ?? true else {
            asking = nil
            return nil
        }
        self.reason = reason
        asking = ResumeRange(offset: delivered, anchor: first.anchor)
        return asking
    }

    /// The current attempt's answer is not the rest of the body: the consumer is told the body starts again, and
    /// later attempts ask for the whole body. Returns whether a range was asked for (and a restart is to be told).
    mutating func restarting() -> Bool {
        guard asking != nil else { return false }
        asking = nil
        first = nil
        delivered = 0
        return true
    }
}
