/// What an authoriser gets from the process that runs it: secrets, an HTTP client for token endpoints and a
/// wall clock. Tests inject each of them.
public struct AuthoriserContext: Sendable {
    /// Resolves `${env:…}` and `${file:…}` references in settings.
    public var secrets: SecretResolver
    /// For token endpoints.
    public var httpClient: any AuthoriserHTTPClient
    /// Seconds since 1970; token expiry is measured against it.
    public var clock: @Sendable () -> Double

    public init(secrets: SecretResolver, httpClient: any AuthoriserHTTPClient, clock: @escaping @Sendable () -> Double) {
        self.secrets = secrets
        self.httpClient = httpClient
        self.clock = clock
    }
}
