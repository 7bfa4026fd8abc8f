/// Why a ``MultipartFormData`` could not be built or sent.
public struct MultipartError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Reason: Sendable, Hashable {
        /// A file part could not be measured or read: its path and the system's reason.
        case unreadableFile(path: String, reason: String)
        /// A part's content holds the boundary, so the server would see the part end there: the part's name.
        case boundaryInContent(part: String)
        /// A file's size changed between its measurement and its reading.
        case fileChanged(path: String)
    }

    public let reason: Reason

    public init(_ reason: Reason) {
        self.reason = reason
    }

    public var description: String {
        switch reason {
        case .unreadableFile(let path, let why): "cannot read \(path) for a multipart part: \(why)"
        case .boundaryInContent(let part): "part '\(part)' holds the multipart boundary; the form cannot be sent with it"
        case .fileChanged(let path): "\(path) changed size while the form was being sent"
        }
    }
}
