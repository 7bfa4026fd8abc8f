package import CourierCore

/// The head of a final (non-1xx) HTTP response: status line and header fields.
package struct HTTPResponseHead: Hashable, Sendable, CustomStringConvertible {
    /// The version on the status line.
    package var version: HTTPVersion
    /// The three-digit status code, 200...599 for a final response.
    package var status: Int
    /// The reason phrase (may be empty; clients must not rely on it).
    package var reason: String
    /// The header fields, in the order received.
    package var headers: HTTPHeaders

    package init(version: HTTPVersion = .http1_1, status: Int, reason: String = "", headers: HTTPHeaders = HTTPHeaders()) {
        self.version = version
        self.status = status
        self.reason = reason
        self.headers = headers
    }

    package var description: String { "\(version) \(status) \(reason)" }
}
