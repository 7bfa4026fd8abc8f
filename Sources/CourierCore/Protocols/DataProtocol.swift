/// Answers `data:` URLs (RFC 2397): `data:[<mediatype>][;base64],<data>`, the bytes the URL carries, with their
/// media type as `Content-Type` (`text/plain;charset=US-ASCII` by default) and `Content-Length`.
///
/// In ``ProtocolRegistry/standard`` (on by default): a `data:` URL reads neither the disk nor the network, so
/// answering one gives a URL from user input nothing it did not already hold. `GET` and `HEAD` are answered;
/// other methods get `405` with `Allow: GET, HEAD`. A malformed URL (no comma, a bad `%` escape, a media type
/// that is not `type/subtype`, invalid base64) fails with a ``ProtocolPluginError`` saying which.
public struct DataProtocol: ProtocolPlugin {
    public init() {}

    public var schemes: [String] { ["data"] }

    public func respond(to request: ProtocolRequest) async throws -> ProtocolResponse {
        guard let allowed = ProtocolResponse.readOnly(request.method) else { return .methodNotAllowed }
        guard !request.url.hasAuthority else { throw ProtocolPluginError("a data: URL has no '//' authority") }
        let data = try DataURL(request.url.path)
        let headers: HTTPHeaders = ["Content-Type": data.mediaType, "Content-Length": String(data.bytes.count)]
        return ProtocolResponse(status: 200, reason: "OK", headers: headers, body: allowed ? .bytes(data.bytes) : .empty)
    }
}

extension ProtocolResponse {
    /// For a read-only plugin: whether `method` gets a body (`GET`: true, `HEAD`: false), nil for another method.
    package static func readOnly(_ method: HTTPMethod) -> Bool? {
        switch method {
        case .get: return true
        case .head: return false
        default: return nil
        }
    }

    /// `405 Method Not Allowed` with `Allow: GET, HEAD`: a read-only plugin's answer to another method.
    package static var methodNotAllowed: ProtocolResponse {
        ProtocolResponse(status: 405, reason: "Method Not Allowed", headers: ["Allow": "GET, HEAD", "Content-Length": "0"])
    }
}
