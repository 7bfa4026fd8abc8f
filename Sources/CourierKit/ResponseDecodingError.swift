public import CourierCore

/// Why ``Response/decode(_:using:)`` gave no value, with what it takes to tell a server's error page from a changed
/// schema: the status, the content type and the first bytes of the body.
public struct ResponseDecodingError: Error, Sendable, CustomStringConvertible {
    /// Which step refused the body.
    public enum Reason: Sendable, Equatable {
        /// The status was not 2xx: the body is the server's answer to a failure, not the model.
        case status
        /// The decoder threw: its message.
        case undecodable(String)
    }

    public let reason: Reason
    /// The response's status code.
    public let status: Int
    /// The response's `Content-Type`, nil when it had none.
    public let contentType: String?
    /// The body's first bytes (at most ``prefixLimit``), for the message and for logs.
    public let bodyPrefix: [UInt8]
    /// The body's whole length.
    public let bodyLength: Int
    /// The final URL.
    public let url: HTTPURL
    /// The type the caller asked for, as Swift names it.
    public let type: String

    /// How many bytes of the body an error keeps.
    public static let prefixLimit = 256

    /// The message: what was asked for, what came, and why it was refused; the body's first bytes as text (bytes
    /// that are not UTF-8 replaced, control characters escaped).
    public var description: String {
        let what = "\(type) from \(url) (status \(status), \(contentType ?? "no content type"), \(bodyLength) bytes)"
        let why: String
        switch reason {
        case .status: why = "the status is not 2xx"
        case .undecodable(let message): why = message
        }
        let shown = String(decoding: bodyPrefix, as: UTF8.self).unicodeScalars.map { scalar -> String in
            scalar.value < 0x20 || scalar.value == 0x7F ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
        }.joined()
        return "cannot decode \(what): \(why); the body begins \"\(shown)\"\(bodyLength > bodyPrefix.count ? "…" : "")"
    }
}
