/// An HTTP request method (RFC 9110 §9). Methods are case-sensitive tokens; the standard ones are upper case.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    public static let get: HTTPMethod = "GET"
    public static let head: HTTPMethod = "HEAD"
    public static let post: HTTPMethod = "POST"
    public static let put: HTTPMethod = "PUT"
    public static let delete: HTTPMethod = "DELETE"
    public static let connect: HTTPMethod = "CONNECT"
    public static let options: HTTPMethod = "OPTIONS"
    public static let trace: HTTPMethod = "TRACE"
    public static let patch: HTTPMethod = "PATCH"

    /// The methods RFC 9110 §9.2.1 defines.
    public static let standard: [HTTPMethod] = [.get, .head, .post, .put, .delete, .connect, .options, .trace, .patch]

    /// Idempotent per RFC 9110 §9.2.2: repeating the request has the same intended effect as sending it once.
    public var isIdempotent: Bool {
        switch self {
        case .get, .head, .put, .delete, .options, .trace: return true
        default: return false
        }
    }

    /// True when the method is a valid RFC 9110 token (non-empty, `tchar` only; see `HTTPToken`).
    public var isValidToken: Bool { HTTPToken.isToken(rawValue) }

    /// `tchar` from RFC 9110 §5.6.2, for code outside this package (the rule itself is `HTTPToken`'s).
    public static func isTokenCharacter(_ byte: UInt8) -> Bool { HTTPToken.isTokenCharacter(byte) }

    public var description: String { rawValue }
}
