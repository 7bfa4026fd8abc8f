/// The rate limiter's bucket key: a host and a path prefix (`api.example.com` + `/v1`).
///
/// It keeps the URL's own path storage (a `Substring`) instead of building a string, so routing a request
/// allocates nothing for its key; ``description`` gives the joined form (`api.example.com/v1`).
public struct EndpointKey: Hashable, Sendable, CustomStringConvertible {
    public let host: String
    public let pathPrefix: Substring

    package init(host: String, pathPrefix: Substring) {
        self.host = host
        self.pathPrefix = pathPrefix
    }

    /// `host` + path prefix.
    public var description: String { host + pathPrefix }

    public static func == (lhs: EndpointKey, rhs: String) -> Bool { lhs.description == rhs }
    public static func == (lhs: String, rhs: EndpointKey) -> Bool { rhs.description == lhs }
}
