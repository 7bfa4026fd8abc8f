/// One request the demo upstream answered: what it saw and why it answered as it did. The trace prints these
/// beside the loader's events, and the demo's checks read them (arrival times, `Host` headers, token grants).
struct UpstreamRecord: Sendable {
    /// When the request arrived, since the demo started.
    var at: Duration
    /// `GET /search?q=1`, or what could be read of a request that was refused.
    var line: String
    /// The path without the query (empty for a request that could not be parsed).
    var path: String
    /// The `Host` header as received.
    var host: String
    var status: Int
    /// Why the upstream answered so, e.g. `failing on purpose (1 of 2)`.
    var note: String
}
