/// Why a ``MockServer`` could not start, or refused a script.
public struct MockServerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What failed: a struct with static members, not an enum, so that kinds can be added (as `CourierError.Kind`).
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String

        /// No port on 127.0.0.1 could be bound.
        public static let cannotListen = Kind(rawValue: "cannot-listen")
        /// The run-time certificate authority, the server's certificate or the TLS context could not be made.
        public static let tlsSetup = Kind(rawValue: "tls-setup")
        /// A ``MockResponse`` the server cannot send: a status outside 200...599, a header that is not a valid
        /// field, a rate below 1, a negative byte count or delay, or waits adding up to more than
        /// ``MockServer/Configuration/maxScriptDelay``.
        public static let invalidScript = Kind(rawValue: "invalid-script")
        /// A path that does not make a URL with the server's origin.
        public static let invalidPath = Kind(rawValue: "invalid-path")
        /// ``MockServer/waitForRequests(_:timeout:)`` or ``ScriptedTransport/waitForRequests(_:timeout:)`` saw
        /// fewer requests than it waited for before its timeout.
        public static let timedOut = Kind(rawValue: "timed-out")

        private init(rawValue: String) { self.rawValue = rawValue }

        public var description: String { rawValue }
    }

    public var kind: Kind
    /// What happened, in words.
    public var message: String

    package init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { "MockServer: \(message)" }
}
