/// The wire traffic of one finished request (success or failure), reported to the service's consumption
/// observers.
public struct Consumption: Hashable, Sendable {
    /// The request's URL as given.
    public var url: String
    /// Bytes written, headers included, summed over attempts.
    public var bytesSent: Int64
    /// Bytes read, headers included, summed over attempts.
    public var bytesReceived: Int64
    /// The response status, nil when the request failed without one.
    public var status: Int?
    /// The request's ``Request/sourceIdentifier``.
    public var sourceIdentifier: String?

    /// The traffic of one finished request.
    public init(url: String, bytesSent: Int64, bytesReceived: Int64, status: Int?, sourceIdentifier: String? = nil) {
        self.sourceIdentifier = sourceIdentifier
        self.url = url
        self.bytesSent = bytesSent
        self.bytesReceived = bytesReceived
        self.status = status
    }
}
