import CourierCore

/// Why connecting to one address failed, as listed in ``ConnectionError/attempts``.
public struct ConnectAttemptFailure: Hashable, Sendable, CustomStringConvertible {
    /// The address that was tried.
    public var address: SocketAddress
    /// The failing call and its errno (`connect` with `ECONNREFUSED`, `socket` with `EAFNOSUPPORT`, ...).
    public var error: SystemCallError

    /// Creates a failure record.
    public init(address: SocketAddress, error: SystemCallError) {
        self.address = address
        self.error = error
    }

    public var description: String { "\(address): \(error)" }
}
