/// What an authoriser gets from the process that runs it: secrets, an HTTP client for token endpoints, a wall
/// clock and, when the policy shares its tokens across a fleet, the shared token store. Tests inject each of them.
public struct AuthoriserContext: Sendable {
    /// Resolves `${env:…}` and `${file:…}` references in settings.
    public var secrets: SecretResolver
    /// For token endpoints.
    public var httpClient: any AuthoriserHTTPClient
    /// Seconds since 1970; token expiry is measured against it.
    public var clock: @Sendable () -> Double
    /// Where the fleet keeps its shared credentials, when the policy asks this authoriser to share them (nil
    /// otherwise: credentials stay in the process). A plugin that supports sharing obtains its credentials
    /// through it; one that does not ignores it.
    public var sharedTokens: (any SharedTokenStore)?

    public init(secrets: SecretResolver, httpClient: any AuthoriserHTTPClient, clock: @escaping @Sendable () -> Double) {
        self.init(secrets: secrets, httpClient: httpClient, clock: clock, sharedTokens: nil)
    }

    public init(
        secrets: SecretResolver,
        httpClient: any AuthoriserHTTPClient,
        clock: @escaping @Sendable () -> Double,
        sharedTokens: (any SharedTokenStore)?
    ) {
        self.secrets = secrets
        self.httpClient = httpClient
        self.clock = clock
        self.sharedTokens = sharedTokens
    }
}
