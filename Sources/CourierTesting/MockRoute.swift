package import CourierCore

/// A dispatcher entry of a ``MockScript``: the method, path (and host) it answers, and how.
package struct MockRoute: Sendable {
    let method: HTTPMethod
    /// The path without query, or `*` for every path.
    let path: String
    /// The host (without port, lower case) the route answers; nil for every host.
    let host: String?
    let handler: @Sendable (MockRequest) -> MockResponse

    package init(method: HTTPMethod, path: String, host: String? = nil, handler: @escaping @Sendable (MockRequest) -> MockResponse) {
        self.method = method
        self.path = path
        self.host = host?.lowercased()
        self.handler = handler
    }

    func matches(_ request: MockRequest) -> Bool {
        guard request.method == method && (path == "*" || request.path == path) else { return false }
        guard let host else { return true }
        return request.host == host
    }
}
