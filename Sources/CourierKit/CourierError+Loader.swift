import CourierCore

extension CourierError.Kind {
    /// An authoriser failed to authorise a request or to refresh its credentials, or timed out doing so.
    public static let authorisation = CourierError.Kind(rawValue: "authorisation")
}
