package import CourierCore

/// Why connecting to one address failed, as listed in ``ConnectionError/attempts``.
package struct ConnectAttemptFailure: Hashable, Sendable, CustomStringConvertible {
    /// The address that was tried.
    package var address: SocketAddress
    /// The failing call and its errno (`connect` with `ECONNREFUSED`, `socket` with `EAFNOSUPPORT`, ...).
    package var error: SystemCallError

    /// Creates a failure record.
    package init(address: SocketAddress, error: SystemCallError) {
        self.address = address
        self.error = error
    }

    package var description: String { "\(address): \(error)" }
}
