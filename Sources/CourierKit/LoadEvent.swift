/// What a streamed request (``DataLoader/stream(_:)``) delivers, in order: a ``response(_:)`` head, its body
/// as ``chunk(_:)``s, and ``finished(_:)`` with the final figures. A failure is thrown instead of `finished`.
///
/// When an attempt fails and the route retries it, ``retrying(attempt:reason:)`` comes first, then the new
/// attempt's head and body from its first byte: two bodies are never mixed silently.
public enum LoadEvent: Sendable {
    /// The response head of an attempt whose body follows.
    case response(ResponseHead)
    /// The next bytes of the body (decoded when the server compressed it).
    case chunk([UInt8])
    /// The previous attempt failed (`reason`) and attempt number `attempt` starts after the route's back-off;
    /// any body bytes already delivered belong to the failed attempt and should be dropped.
    case retrying(attempt: Int, reason: String)
    /// The request is done: attempts, timeline and wire bytes (the body was delivered in chunks, so
    /// ``Response/body`` is empty).
    case finished(Response)
}
