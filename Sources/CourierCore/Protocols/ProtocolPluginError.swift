/// A protocol plugin could not answer: thrown by the built-in plugins (a malformed `data:` URL, a missing file, a
/// path outside ``FileProtocol``'s root) and free for an app's plugins to throw. The transport turns it into a
/// ``CourierError`` of kind `protocol-plugin` with ``message`` as its message (so it must hold no secret).
public struct ProtocolPluginError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, in one sentence.
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
