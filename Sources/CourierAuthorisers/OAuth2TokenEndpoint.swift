internal import CourierCore
#if canImport(FoundationEssentials)
internal import FoundationEssentials
#else
internal import Foundation
#endif

/// A token endpoint (RFC 6749 §3.2): POSTs a grant as a form and parses the JSON answer (§5.1, §5.2).
///
/// The client authenticates with HTTP Basic (§2.3.1: id and secret form-encoded, then base64) when it has a
/// secret; `client_id` is always in the form too, so public clients work. Errors say what went wrong (the
/// status and the OAuth `error` code, which is not a secret) and never carry a token or the body.
struct OAuth2TokenEndpoint: Sendable {
    let authoriser: String
    let url: HTTPURL
    let clientID: String
    let clientSecret: String?
    let httpClient: any AuthoriserHTTPClient
    let clock: @Sendable () -> Double

    /// What one successful token request returned.
    struct Grant: Sendable {
        var token: AccessToken
        /// A rotated refresh token, when the endpoint issued one.
        var refreshToken: String?
    }

    func request(_ parameters: [(String, String)]) async throws(AuthoriserError) -> Grant {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        headers.add(name: "Accept", value: "application/json")
        if let clientSecret {
            let credentials = FormEncoding.component(clientID, spaceAsPlus: true) + ":"
                + FormEncoding.component(clientSecret, spaceAsPlus: true)
            headers.add(name: "Authorization", value: "Basic " + Base64.encode(Array(credentials.utf8)))
        }
        let body = Array(FormEncoding.encode(parameters + [("client_id", clientID)]).utf8)
        let requestedAt = clock()
        let response: (status: Int, headers: HTTPHeaders, body: [UInt8])
        do {
            response = try await httpClient.send(method: .post, url: url, headers: headers, body: body)
        } catch {
            throw AuthoriserError(
                .tokenRequestFailed, "the token endpoint \(url) could not be reached", authoriser: authoriser, cause: error
            )
        }
        guard (200..<300).contains(response.status) else {
            var message = "the token endpoint \(url) answered \(response.status)"
            if let code = (try? JSONDecoder().decode(ErrorBody.self, from: Data(response.body)))?.error,
                code.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }), code.utf8.count <= 64
            {
                message += Self.errorCodeSuffix(code)
            }
            throw AuthoriserError(.tokenEndpointStatus, message, authoriser: authoriser, status: response.status)
        }
        let parsed: TokenBody
        do {
            parsed = try JSONDecoder().decode(TokenBody.self, from: Data(response.body))
        } catch {
            throw AuthoriserError(
                .malformedTokenResponse, "the token endpoint \(url) answered \(response.status) with a body that is not a JSON token object",
                authoriser: authoriser, status: response.status
            )
        }
        guard let value = parsed.accessToken, !value.isEmpty else {
            throw AuthoriserError(
                .missingAccessToken, "the token endpoint \(url) answered without an access_token",
                authoriser: authoriser, status: response.status
            )
        }
        guard HTTPHeaders.isValidValue(value) else {
            throw AuthoriserError(
                .malformedTokenResponse, "the token endpoint \(url) issued an access_token that cannot go in a header",
                authoriser: authoriser, status: response.status
            )
        }
        let expiresAt = parsed.expiresIn.map { requestedAt + $0 }
        let token = AccessToken(value: value, type: parsed.tokenType ?? "Bearer", expiresAt: expiresAt, issuedAt: requestedAt)
        return Grant(token: token, refreshToken: parsed.refreshToken.flatMap { $0.isEmpty ? nil : $0 })
    }

    /// How an error answer's OAuth `error` code (§5.2, not a secret) ends the message.
    private static func errorCodeSuffix(_ code: String) -> String { " (error: \(code))" }

    /// Whether `error` is the endpoint's `invalid_grant` (§5.2): the refresh token is spent, revoked or unknown.
    static func isInvalidGrant(_ error: AuthoriserError) -> Bool {
        error.kind == .tokenEndpointStatus && error.message.hasSuffix(errorCodeSuffix("invalid_grant"))
    }

    /// §5.1. `expires_in` is a number of seconds; some providers send it as a string, which is accepted too.
    private struct TokenBody: Decodable {
        var accessToken: String?
        var tokenType: String?
        var expiresIn: Double?
        var refreshToken: String?

        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token"
            case tokenType = "token_type"
            case expiresIn = "expires_in"
            case refreshToken = "refresh_token"
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            accessToken = try c.decodeIfPresent(String.self, forKey: .accessToken)
            tokenType = try c.decodeIfPresent(String.self, forKey: .tokenType)
            refreshToken = try c.decodeIfPresent(String.self, forKey: .refreshToken)
            if let seconds = try? c.decodeIfPresent(Double.self, forKey: .expiresIn) {
                expiresIn = seconds
            } else if let text = try? c.decodeIfPresent(String.self, forKey: .expiresIn), let seconds = Double(text) {
                expiresIn = seconds
            } else if c.contains(.expiresIn), try !c.decodeNil(forKey: .expiresIn) {
                throw DecodingError.dataCorruptedError(forKey: .expiresIn, in: c, debugDescription: "not a number")
            }
            if let e = expiresIn, !e.isFinite || e < 0 {
                throw DecodingError.dataCorruptedError(forKey: .expiresIn, in: c, debugDescription: "out of range")
            }
        }
    }

    /// §5.2.
    private struct ErrorBody: Decodable {
        var error: String?
    }
}
