internal import CourierCore
internal import CourierTransport

/// Authorisers' own HTTP calls (token endpoints) over the service's transport, without redirects.
struct TransportAuthoriserClient: AuthoriserHTTPClient {
    let client: HTTPClient

    func send(method: HTTPMethod, url: HTTPURL, headers: HTTPHeaders, body: [UInt8]?) async throws -> (
        status: Int, headers: HTTPHeaders, body: [UInt8]
    ) {
        let response = try await client.execute(
            HTTPRequest(method: method, url: url, headers: headers, body: body.map { .bytes($0) } ?? .none, maxRedirects: 0)
        )
        return (response.status, response.headers, response.body)
    }
}
