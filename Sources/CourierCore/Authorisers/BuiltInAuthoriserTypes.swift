/// The settings of Courier's built-in authoriser types. Their behaviour lives in the loader; this is what
/// the compiler and the linter need to check a policy offline.
public enum BuiltInAuthoriserTypes {
    public static let staticBearer = AuthoriserTypeDescriptor(
        type: "static-bearer",
        summary: "Sends a fixed bearer token.",
        settings: [
            .init("token", .secret, required: true, "The token, e.g. \"${env:API_TOKEN}\"."),
            .init("header", .headerName, default: "Authorization", "The header to send it in."),
            .init("prefix", .string, default: "Bearer ", "Text put before the token in the header value."),
        ]
    )

    public static let oauth2Refresh = AuthoriserTypeDescriptor(
        type: "oauth2-refresh",
        summary: "OAuth 2.0 refresh-token grant (RFC 6749 §6): trades a refresh token for access tokens.",
        settings: [
            .init("token-url", .url, required: true, "The token endpoint."),
            .init("client-id", .string, required: true, "The OAuth client id."),
            .init("client-secret", .secret, "The client secret, for confidential clients."),
            .init("refresh-token", .secret, required: true, "The long-lived refresh token."),
            .init("scope", .string, "Space-separated scopes to ask for."),
            .init("refresh-before", .duration, default: "60s", "Refresh this long before the access token expires."),
        ],
        supportsSharedTokens: true
    )

    public static let oauth2ClientCredentials = AuthoriserTypeDescriptor(
        type: "oauth2-client-credentials",
        summary: "OAuth 2.0 client-credentials grant (RFC 6749 §4.4) for service-to-service calls.",
        settings: [
            .init("token-url", .url, required: true, "The token endpoint."),
            .init("client-id", .string, required: true, "The OAuth client id."),
            .init("client-secret", .secret, required: true, "The client secret."),
            .init("scope", .string, "Space-separated scopes to ask for."),
            .init("audience", .string, "The audience parameter some providers require."),
            .init("refresh-before", .duration, default: "60s", "Refresh this long before the access token expires."),
        ],
        supportsSharedTokens: true
    )

    public static let apiKey = AuthoriserTypeDescriptor(
        type: "api-key",
        summary: "Sends an API key in a header or a query item.",
        settings: [
            .init("key", .secret, required: true, "The API key."),
            .init("header", .headerName, default: "X-API-Key", "The header to send the key in."),
            .init("query-item", .string, "Send the key as this query item instead of a header."),
        ],
        crossCheck: { settings in
            if settings["header"] != nil && settings["query-item"] != nil {
                return [("query-item", "'header' and 'query-item' are exclusive; the key goes in one place")]
            }
            return []
        }
    )

    public static let basic = AuthoriserTypeDescriptor(
        type: "basic",
        summary: "HTTP Basic authentication (RFC 7617).",
        settings: [
            .init("username", .string, required: true, "The user name."),
            .init("password", .secret, required: true, "The password."),
        ]
    )

    public static let hmacSignature = AuthoriserTypeDescriptor(
        type: "hmac-signature",
        summary: "Signs each request with an HMAC over its method, target, date and chosen headers.",
        settings: [
            .init("key-id", .string, required: true, "Identifies the key to the server."),
            .init("secret", .secret, required: true, "The shared HMAC key."),
            .init("algorithm", .choice(["hmac-sha256", "hmac-sha512"]), default: "hmac-sha256", "The MAC algorithm."),
            .init("header", .headerName, default: "Signature", "The header that carries the signature."),
            .init("signed-headers", .stringList, default: "[host, date]", "Headers covered by the signature."),
        ]
    )

    public static let all = [staticBearer, oauth2Refresh, oauth2ClientCredentials, apiKey, basic, hmacSignature]
}
