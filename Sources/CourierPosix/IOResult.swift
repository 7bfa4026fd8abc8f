/// The outcome of a non-blocking system call that did not fail.
///
/// `wouldBlock` is not an error: the descriptor is not ready (`EAGAIN`/`EWOULDBLOCK`, or `EINPROGRESS` for
/// `connect`). The caller waits for readiness through the event loop and tries again.
package enum IOResult<T> {
    /// The call could not make progress without blocking.
    case wouldBlock
    /// The call completed with this value.
    case processed(T)
}

extension IOResult: Sendable where T: Sendable {}
extension IOResult: Equatable where T: Equatable {}
