/// Answers requests for URL schemes of its own, in place of Courier's sockets: SPTDataLoader's custom URL protocols.
///
/// A plugin claims schemes (``schemes``) and answers one request at a time with a response head and a body that
/// is read as a stream of byte chunks (``ProtocolResponse``). Register it at start-up in a ``ProtocolRegistry``
/// (the data loader's `DataLoaderService.Configuration.protocols`, or `HTTPClientConfiguration.protocols`): the
/// transport then hands every request for those schemes to the plugin instead of opening a connection, and
/// everything above it (policy routing, rate limits, retries, authorisers, the cache, streaming and delegates)
/// works over the plugin's answer as over a server's. A plugin may claim `http` and `https` too: that is how a
/// scripted transport replaces the network in tests.
///
/// Courier's built-ins are ``DataProtocol`` (`data:`, RFC 2397; registered by default) and ``FileProtocol``
/// (`file:`, read-only, under a root the app names; never registered by default). docs/protocol-plugins.md shows how
/// to write one.
///
/// The request's one deadline applies to the plugin's answer as to a socket's: ``respond(to:)`` and every body
/// chunk are raced against it (and the load's cancellation), the plugin's task is cancelled when it passes, and the
/// load fails with `timeout`. An error the plugin throws becomes a ``CourierError`` of kind `protocol-plugin`
/// (its description is the message, so it must hold no secret), unless it already is a ``CourierError``: that one
/// is kept as it is, so a plugin can fail as a network would (`CourierError(.connect, …)` is retried as a
/// `connect-error`).
public protocol ProtocolPlugin: Sendable {
    /// The URL schemes this plugin answers, lower case, without the colon (`["data"]`, `["memo"]`).
    var schemes: [String] { get }

    /// Answers one request: the head now, the body as ``ProtocolResponse/body`` is read. Called once per attempt
    /// (a retried load asks again), from any task; must not block a thread for long (read files in chunks).
    func respond(to request: ProtocolRequest) async throws -> ProtocolResponse
}
