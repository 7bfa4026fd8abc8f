internal import CourierCore
internal import CourierHTTP1

/// The requests of one connection, as a pure state machine: the bytes read (and the time they arrived) go in,
/// what the server must do next comes out. No I/O, no clock.
struct MockExchange {
    enum Action {
        /// Read more; `idle` when no byte of a next request has arrived (the idle timeout applies, not the I/O one).
        case needBytes(idle: Bool)
        /// A whole request arrived: answer it, then close unless `keepAlive`.
        case answer(MockRequest, keepAlive: Bool)
        /// The request is refused: answer the error's status and close.
        case refuse(RequestParseError)
        /// The client closed its side between requests.
        case done
    }

    let connectionID: Int
    private var parser: RequestParser
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var headArrival: ContinuousClock.Instant?
    private var lastArrival: ContinuousClock.Instant?
    private var index = 0
    private var sawEnd = false

    init(connectionID: Int, limits: RequestParser.Limits) {
        self.connectionID = connectionID
        self.parser = RequestParser(limits: limits)
    }

    /// Bytes read at `time`; empty when the client closed its side.
    mutating func received(_ bytes: [UInt8], at time: ContinuousClock.Instant) {
        lastArrival = time
        if bytes.isEmpty {
            sawEnd = true
            parser.eof()
        } else {
            parser.feed(bytes)
        }
    }

    mutating func next() -> Action {
        do {
            while let event = try parser.next() {
                switch event {
                case .head(let received, _):
                    head = received
                    headArrival = lastArrival
                    body = []
                case .body(let bytes):
                    body += bytes
                case .end(let keepAlive):
                    guard let head, let arrival = headArrival ?? lastArrival else { continue }
                    let request = MockRequest(
                        method: head.method, target: head.target, headers: head.headers, body: body, receivedAt: arrival,
                        connectionID: connectionID, indexOnConnection: index
                    )
                    index += 1
                    self.head = nil
                    body = []
                    return .answer(request, keepAlive: keepAlive)
                }
            }
        } catch {
            return .refuse(error)
        }
        return sawEnd ? .done : .needBytes(idle: parser.isBetweenRequests)
    }
}
