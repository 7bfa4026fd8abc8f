internal import CourierCore
internal import CourierTransport

/// Authorisers' own HTTP calls (token endpoints) over the service's transport and its protocol plugins (so that a
/// plugin claiming https, a scripted transport, answers the token endpoint too), without redirects.
struct TransportAuthoriserClient: AuthoriserHTTPClient {
    let client: HTTPClient
    let protocols: ProtocolRegistry

    func send(method: HTTPMethod, url: HTTPURL, headers: HTTPHeaders, body: [UInt8]?) async throws -> (
        status: Int, headers: HTTPHeaders, body: [UInt8]
    ) {
        var request = HTTPRequest(method: method, url: url, headers: headers, body: body.map { .bytes($0) } ?? .none, maxRedirects: 0)
        request.protocols = protocols
        let response = try await client.execute(request)
        return (response.status, response.headers, response.body)
    }
}
