/// What a streamed request (``DataLoader/stream(_:)``) delivers, in order: a ``response(_:)`` head, its body
/// as ``chunk(_:)``s, and ``finished(_:)`` with the final figures. A failure is thrown instead of `finished`.
///
/// When an attempt fails and the route retries it, ``retrying(attempt:reason:)`` comes first, then the new
/// attempt's head and body from its first byte: two bodies are never mixed silently.
///
/// When a `GET`'s body breaks off after some of it was delivered and the route retries the failure, the retry asks
/// for the rest (`Range` and `If-Range`, when the response had a strong validator and no content coding). A `206`
/// that continues the same representation is delivered as ``resuming(attempt:from:reason:)`` and then the rest of
/// the bytes, with no head of its own: keep what you have. Any other answer is a restart, told by
/// ``retrying(attempt:reason:)`` as before.
public enum LoadEvent: Sendable {
    /// The response head of an attempt whose body follows.
    case response(ResponseHead)
    /// The next bytes of the body (decoded when the server compressed it).
    case chunk([UInt8])
    /// The previous attempt failed (`reason`) and attempt number `attempt` starts after the route's back-off;
    /// any body bytes already delivered belong to the failed attempt and should be dropped.
    case retrying(attempt: Int, reason: String)
    /// The body broke off (`reason`) after `from` bytes, and attempt number `attempt` continues it: the chunks that
    /// follow are its bytes from offset `from` on. Keep the bytes delivered so far; no new ``response(_:)`` comes.
    case resuming(attempt: Int, from: Int64, reason: String)
    /// The request is done: attempts, timeline and wire bytes (the body was delivered in chunks, so
    /// ``Response/body`` is empty).
    case finished(Response)
}
