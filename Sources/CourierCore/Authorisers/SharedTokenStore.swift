/// Credentials a fleet of processes shares, so that the fleet refreshes them once, not once per process.
///
/// With rotating refresh tokens (RFC 9700 §4.14.2) an authorisation server treats a second use of a refresh token
/// as a replay and revokes the whole token family: eight instances that each refresh the same token log
/// themselves out. A store serialises refreshes across the fleet: one instance refreshes and writes the result;
/// the others read it. The loader hands a store to an authoriser in ``AuthoriserContext/sharedTokens`` when the
/// policy asks for sharing (Courier's own is backed by Redis); without one, a plugin keeps its credentials in
/// memory as before.
///
/// Records are opaque bytes, each under an *identity*: whatever makes two authorisers' credentials the same (for
/// OAuth 2: the token URL, client id, scope and grant). A store keeps them confidential at rest (Courier's
/// encrypts them) and never logs them.
public protocol SharedTokenStore: Sendable {
    /// The record stored under `identity`, or nil when there is none.
    ///
    /// - Throws: ``AuthoriserError`` of kind ``AuthoriserError/Kind-swift.struct/sharedTokenUnreadable`` for a
    ///   record this process cannot decrypt, ``AuthoriserError/Kind-swift.struct/sharedTokensUnavailable`` when
    ///   the store cannot be reached and is set to fail closed (otherwise an unreachable store reads as empty).
    func read(identity: String) async throws -> [UInt8]?

    /// A usable record for `identity`, refreshing it at most once across the fleet.
    ///
    /// Returns the stored record when `isUsable` accepts it. Otherwise takes the fleet-wide refresh lock for
    /// `identity`, reads the record again, and either returns what another instance wrote meanwhile or calls
    /// `refresh` once with the stored record (nil when there is none), writes its result for its
    /// ``SharedTokenRecord/keepFor`` and releases the lock. An instance that does not get the lock waits, polling
    /// the record, for at most `maximumWait`, and never calls `refresh` while another instance holds the lock.
    /// When the store cannot be reached it calls `refresh` in this process and writes nothing, or throws, as it is
    /// configured.
    ///
    /// - Throws: what `refresh` throws, or ``AuthoriserError`` of kind
    ///   ``AuthoriserError/Kind-swift.struct/sharedTokenUnreadable``,
    ///   ``AuthoriserError/Kind-swift.struct/sharedTokensUnavailable`` or
    ///   ``AuthoriserError/Kind-swift.struct/sharedTokenWaitTimedOut``.
    func obtain(
        identity: String,
        waitingAtMost maximumWait: Duration,
        isUsable: @Sendable ([UInt8]) -> Bool,
        refresh: @Sendable (_ stored: [UInt8]?) async throws -> SharedTokenRecord
    ) async throws -> [UInt8]
}
