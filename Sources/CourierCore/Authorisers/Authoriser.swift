/// One live authoriser instance: attaches credentials to requests, refreshing them when needed.
///
/// The loader calls ``authorise(_:)`` for every request its policy routes to this instance (only for hosts the
/// policy assigned, and only over https unless the instance allows plain http), waits while it works (bounded
/// by ``AuthoriserInstance/timeout``), and calls ``authorisationFailed(for:)`` when the server answers 401,
/// then authorises and sends the request once more.
///
/// Implementations are shared by every request of a user, so they are thread-safe; concurrent callers that
/// find the credentials missing share one refresh in flight (single flight).
public protocol Authoriser: AnyObject, Sendable {
    /// Adds credentials (header fields or query items) to `request`, refreshing them first when they are
    /// missing or about to expire. Throws ``AuthoriserError`` when no credentials can be had.
    func authorise(_ request: inout AuthorisationRequest) async throws

    /// The server answered 401 to `request` (as it was after ``authorise(_:)``): the credentials it carried
    /// must not be used again (e.g. the access token is dropped), so the next ``authorise(_:)`` refreshes.
    func authorisationFailed(for request: AuthorisationRequest) async

    /// Fetches fresh credentials now; joins a refresh already in flight instead of starting another. A no-op
    /// for authorisers whose credentials are static.
    func refresh() async throws
}
