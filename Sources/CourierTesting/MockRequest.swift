public import CourierCore

/// A request a ``MockServer`` received, as it arrived: what a dispatcher is given and what
/// ``MockServer/requests`` records, in arrival order.
public struct MockRequest: Hashable, Sendable {
    /// The method as sent.
    public var method: HTTPMethod
    /// The request target as sent: `/path?query` (origin form) in nearly every request.
    public var target: String
    /// The header fields as sent, framing fields included.
    public var headers: HTTPHeaders
    /// The whole body (chunk framing removed); empty when there was none.
    public var body: [UInt8]
    /// When the server finished reading the request's head.
    public var receivedAt: ContinuousClock.Instant
    /// The connection it came on, numbered from 1 in the order the server accepted them: two requests with one
    /// id came over one kept-alive connection. 0 for a request a ``ScriptedTransport`` answered (no connection).
    public var connectionID: Int
    /// Its place among the requests of its connection, from 0 (of a ``ScriptedTransport``: among all its requests).
    public var indexOnConnection: Int

    public init(
        method: HTTPMethod, target: String, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [],
        receivedAt: ContinuousClock.Instant = .now, connectionID: Int = 0, indexOnConnection: Int = 0
    ) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
        self.receivedAt = receivedAt
        self.connectionID = connectionID
        self.indexOnConnection = indexOnConnection
    }

    /// The target without its query.
    public var path: String {
        target.firstIndex(of: "?").map { String(target[..<$0]) } ?? target
    }

    /// The query (after `?`), nil when there is none.
    public var query: String? {
        target.firstIndex(of: "?").map { String(target[target.index(after: $0)...]) }
    }

    /// The `Host` field's host, lower case, without the port or an IPv6 address's brackets; nil without the field.
    public var host: String? {
        guard let field = headers["host"]?.lowercased() else { return nil }
        if field.hasPrefix("["), let close = field.firstIndex(of: "]") {
            return String(field[field.index(after: field.startIndex)..<close])
        }
        return field.firstIndex(of: ":").map { String(field[..<$0]) } ?? field
    }

    /// The body as UTF-8 text (invalid bytes replaced).
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}
