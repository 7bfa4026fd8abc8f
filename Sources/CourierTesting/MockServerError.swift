/// Why a ``MockServer`` could not start, or refused a script.
public struct MockServerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What failed.
    public enum Kind: Hashable, Sendable {
        /// No port on 127.0.0.1 could be bound, or the server's event loop did not start.
        case cannotListen
        /// The run-time certificate authority, the server's certificate or the TLS context could not be made.
        case tlsSetup
        /// A ``MockResponse`` the server cannot send: a status outside 200...599, a header that is not
        /// a valid field, a rate or byte count below 1, a negative delay, or waits adding up to more than
        /// ``MockServer/Configuration/maxScriptDelay``.
        case invalidScript
        /// A path that does not make a URL with the server's origin.
        case invalidPath
    }

    public var kind: Kind
    /// What happened, in words.
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { "MockServer: \(message)" }
}
