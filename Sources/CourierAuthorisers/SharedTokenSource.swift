internal import CourierCore

/// How an OAuth 2 plugin gets its tokens: from its grant directly (no store: today's behaviour), or through the
/// fleet's ``SharedTokenStore`` (`share-tokens: true`), where one instance refreshes and the others read.
///
/// Through a store, a stored record is used when its token is not expiring within `refresh-before` and is not the
/// token this process just saw refused; otherwise the store's lock admits one refresh for the fleet, which gets the
/// stored record (and so the current refresh token: no instance presents a spent one). A refresh the server answers
/// with `invalid_grant` reads the store once more before failing: another instance may have refreshed meanwhile.
struct SharedTokenSource: Sendable {
    let store: any SharedTokenStore
    /// What makes two authorisers' tokens the same (the store hashes it into a key).
    let identity: String
    let authoriser: String
    /// `refresh-before`, in seconds.
    let margin: Double
    /// The authoriser's timeout: the longest this process waits for another's refresh.
    let maximumWait: Duration
    let clock: @Sendable () -> Double

    /// A fetch for ``TokenCache``: a new grant, never carrying the token value `avoiding`. `grant` asks the token
    /// endpoint, given the stored record (nil without a store, or when none is stored).
    static func fetch(
        _ instance: AuthoriserInstance,
        _ context: AuthoriserContext,
        identity: String,
        margin: Double,
        grant: @escaping @Sendable (_ stored: SharedGrant?) async throws -> SharedGrant
    ) -> @Sendable (_ avoiding: String?) async throws -> SharedGrant {
        guard let store = context.sharedTokens else { return { _ in try await grant(nil) } }
        let source = SharedTokenSource(
            store: store, identity: identity, authoriser: instance.name, margin: margin, maximumWait: instance.timeout,
            clock: context.clock
        )
        return { avoiding in try await source.obtain(avoiding: avoiding, grant: grant) }
    }

    func obtain(avoiding: String?, grant: @Sendable (_ stored: SharedGrant?) async throws -> SharedGrant) async throws -> SharedGrant {
        let (clock, margin) = (self.clock, self.margin)
        do {
            let bytes = try await store.obtain(
                identity: identity, waitingAtMost: maximumWait,
                isUsable: { SharedGrant(decoding: $0)?.isUsable(now: clock(), margin: margin, avoiding: avoiding) ?? false },
                refresh: { stored in
                    let fresh = try await grant(stored.flatMap(SharedGrant.init(decoding:)))
                    return SharedTokenRecord(bytes: fresh.encoded, keepFor: fresh.retention(now: clock()))
                }
            )
            guard let shared = SharedGrant(decoding: bytes) else {
                throw AuthoriserError(.sharedTokenUnreadable, "the shared token record is not one this version of Courier reads")
            }
            return shared
        } catch let error as AuthoriserError where OAuth2TokenEndpoint.isInvalidGrant(error) {
            // This process refreshed with a refresh token another instance had already used (outside the lock:
            // the store was unreachable, or a lease lapsed). If that instance stored its result, it is good.
            if let bytes = try? await store.read(identity: identity), let shared = SharedGrant(decoding: bytes),
                shared.isUsable(now: clock(), margin: margin, avoiding: avoiding)
            {
                return shared
            }
            throw error.naming(authoriser)
        } catch let error as AuthoriserError {
            throw error.naming(authoriser)
        }
    }
}
