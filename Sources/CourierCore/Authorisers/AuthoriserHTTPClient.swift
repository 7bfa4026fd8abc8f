/// The HTTP client an authoriser uses for its own requests (token endpoints). The loader supplies one backed
/// by its transport; it must not route these requests back through an authoriser.
public protocol AuthoriserHTTPClient: Sendable {
    /// Sends one request and returns the whole response. Throws for transport failures only; any HTTP status
    /// is a response.
    func send(
        method: HTTPMethod,
        url: HTTPURL,
        headers: HTTPHeaders,
        body: [UInt8]?
    ) async throws -> (status: Int, headers: HTTPHeaders, body: [UInt8])
}
