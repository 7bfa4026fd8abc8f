public import CourierCore

/// The callback way to consume requests, after SPTDataLoader's delegate: ``DataLoader/load(_:delegate:)``.
///
/// For every request exactly one terminal callback is made, whatever happens:
/// ``didReceiveSuccessfulResponse(_:for:)`` for a status below 400,
/// ``didReceiveErrorResponse(_:error:for:)`` for a status of 400 or more (after the route's retries) or a
/// failure with no response, or ``didCancel(_:)`` when the request, its loader or the loader's owner
/// cancelled it. Before it come ``didReceiveInitialResponse(_:for:)`` for each attempt whose body is read,
/// ``didReceiveDataChunk(_:for:)`` for each chunk when the request asked for chunks
/// (``Request/deliversChunks``), ``willRetry(_:attempt:reason:)`` when an attempt failed and another
/// starts, and ``didResume(_:attempt:from:reason:)`` when a `GET`'s body broke off and another attempt continues
/// it from where it stopped (a `206`: the chunks delivered so far stay, and no new initial response comes). Callbacks for one request come one at a time, in that order, from a task of the loader's; the
/// loader holds the delegate until the terminal callback.
public protocol DataLoaderDelegate: AnyObject, Sendable {
    /// Terminal: the request got a response with a status below 400. Its body is empty when it was delivered
    /// in chunks.
    func didReceiveSuccessfulResponse(_ response: Response, for load: LoadHandle)
    /// Terminal: the request got a 4xx or 5xx response (`response` set, `error` of kind `http-status`), or
    /// failed without one (`response` nil; `error` says why: offline, an invalid URL, an authoriser that failed
    /// or timed out, a transport failure after the retries).
    func didReceiveErrorResponse(_ response: Response?, error: CourierError, for load: LoadHandle)
    /// Terminal: the request was cancelled.
    func didCancel(_ load: LoadHandle)
    /// An attempt's response head, before its body.
    func didReceiveInitialResponse(_ head: ResponseHead, for load: LoadHandle)
    /// The next chunk of the body, when ``Request/deliversChunks`` is set.
    func didReceiveDataChunk(_ chunk: [UInt8], for load: LoadHandle)
    /// An attempt failed and attempt number `attempt` follows; chunks delivered so far belong to the failed
    /// attempt.
    func willRetry(_ load: LoadHandle, attempt: Int, reason: String)
    /// The body broke off (`reason`) after `offset` bytes and attempt number `attempt` continues it: the chunks that
    /// follow are its bytes from `offset` on; those delivered so far stay part of the body.
    func didResume(_ load: LoadHandle, attempt: Int, from offset: Int64, reason: String)
}

extension DataLoaderDelegate {
    public func didReceiveInitialResponse(_ head: ResponseHead, for load: LoadHandle) {}
    public func didReceiveDataChunk(_ chunk: [UInt8], for load: LoadHandle) {}
    public func willRetry(_ load: LoadHandle, attempt: Int, reason: String) {}
    public func didResume(_ load: LoadHandle, attempt: Int, from offset: Int64, reason: String) {}
}
