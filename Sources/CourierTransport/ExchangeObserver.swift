package import CourierHTTP1
package import CourierTLS

/// Sees what an ``HTTPClient`` puts on the wire and reads from it, exchange by exchange, as curl's `-v` shows
/// it (`courier fetch -v`): the connection a request goes out on, the request head as written, the response head
/// as read. Each redirect hop and retry is an exchange of its own. Called on the request's task, in that order,
/// from ``HTTPClientConfiguration/exchangeObserver``; a client without one does none of this work.
package protocol ExchangeObserver: Sendable {
    /// The connection the next request head goes out on (new, or reused from the pool).
    func connection(_ connection: ExchangeConnection)
    /// The request head's bytes as written: request line, fields, and the blank line (no body).
    func sent(head: [UInt8])
    /// The final response head (not a `1xx`), as parsed.
    func received(head: HTTPResponseHead)
}

/// The connection an exchange goes out on, for an ``ExchangeObserver``.
package struct ExchangeConnection: Sendable {
    /// The origin's host and port (the URL's, whatever address was connected to).
    package var host: String
    package var port: Int
    /// The address connected to (`127.0.0.1:8443`), when the stream can say.
    package var address: String?
    /// Whether an earlier request used it (no connect, no handshake this time).
    package var reused: Bool
    /// What its TLS session negotiated; nil for plain http.
    package var tls: TLSSessionInfo?
}
