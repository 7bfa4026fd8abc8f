import CourierCore
import CourierKit

/// Why a catalog call failed, with what the caller needs to react: the transport's error, the HTTP status, or
/// a body that was not the JSON the endpoint promises.
enum CatalogError: Error, CustomStringConvertible {
    /// No response: the loader's error after the policy's retries (`kind` says what: connect, timeout, ...).
    case transport(CourierError)
    /// The server answered with a status other than 2xx.
    case status(Int, path: String)
    /// The body did not decode as the endpoint's model (the reason is `Response.decode`'s error: the status, the
    /// content type and the body's first bytes).
    case undecodable(path: String, reason: String)

    var description: String {
        switch self {
        case .transport(let error): return "no response: \(error)"
        case .status(let status, let path): return "\(path): the server answered \(status)"
        case .undecodable(let path, let reason): return "\(path): unexpected JSON (\(reason))"
        }
    }
}
