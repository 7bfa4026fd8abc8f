internal import CourierCore

/// A dispatcher entry of ``MockServer``: the method and path it answers, and how.
struct MockRoute: Sendable {
    let method: HTTPMethod
    /// The path without query, or `*` for every path.
    let path: String
    let handler: @Sendable (MockRequest) -> MockResponse

    func matches(_ request: MockRequest) -> Bool {
        request.method == method && (path == "*" || request.path == path)
    }
}
