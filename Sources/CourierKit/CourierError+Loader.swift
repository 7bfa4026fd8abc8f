public import CourierCore

extension CourierError.Kind {
    /// An authoriser failed to authorise a request or to refresh its credentials, or timed out doing so.
    public static let authorisation = CourierError.Kind(rawValue: "authorisation")

    /// The factory is offline (``DataLoaderFactory/isOffline``): the request was not sent.
    public static let offline = CourierError.Kind(rawValue: "offline")

    /// The HTTP cache could not be read or written. A load never fails with it: it is reported in the trace
    /// (``CacheEvent/failed(error:)``) and the load goes on without the cache.
    public static let cache = CourierError.Kind(rawValue: "cache")

    /// The server answered with an error status (4xx or 5xx) after the route's retries: ``Response/error``.
    public static let httpStatus = CourierError.Kind(rawValue: "http-status")
}
