/// A redirect response that cannot be followed.
package struct RedirectError: Error, Hashable, Sendable, CustomStringConvertible {
    package enum Reason: Hashable, Sendable {
        /// A 301/302/303/307/308 response without a `Location` field (an empty one is not an error: the response
        /// is not followed).
        case missingLocation
        /// A `Location` that does not resolve to an http(s) URL (spaces, control bytes, another scheme, ...).
        case invalidLocation(String)
    }

    package var reason: Reason
    /// The status of the redirect response.
    package var status: Int

    package init(_ reason: Reason, status: Int) {
        self.reason = reason
        self.status = status
    }

    package var description: String {
        switch reason {
        case .missingLocation: return "\(status) redirect without a Location header"
        case .invalidLocation(let value): return "\(status) redirect to an invalid Location \(value.debugDescription)"
        }
    }
}
