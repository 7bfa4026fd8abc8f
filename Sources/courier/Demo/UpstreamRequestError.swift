/// Why the demo upstream could not read a request; it answers 400 (or 413, 501) with the description and
/// closes the connection.
struct UpstreamRequestError: Error, Sendable, CustomStringConvertible {
    /// The status the upstream answers with.
    var status: Int
    /// What was wrong, e.g. `the request head is longer than 16384 bytes`.
    var message: String

    var description: String { "\(status): \(message)" }

    static func malformed(_ message: String) -> UpstreamRequestError {
        UpstreamRequestError(status: 400, message: message)
    }
}
