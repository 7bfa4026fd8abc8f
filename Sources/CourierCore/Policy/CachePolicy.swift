/// Caching rules for a service's responses.
public struct CachePolicy: Hashable, Sendable {
    /// How long a stored response stays fresh when the server does not say.
    public package(set) var ttl: Duration
    /// The most bytes this service's cached responses may take on disk.
    public package(set) var maxSize: Int64

    package init(ttl: Duration, maxSize: Int64) {
        self.ttl = ttl
        self.maxSize = maxSize
    }

    /// What `cache: on` means without `ttl` or `max-size`: 5 minutes, 10 MiB.
    public static let builtIn = CachePolicy(ttl: .seconds(300), maxSize: 10 << 20)
}
