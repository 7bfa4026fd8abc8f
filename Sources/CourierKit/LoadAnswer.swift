internal import CourierHTTPCache
internal import CourierTransport

/// A response whose body is still to be read, as the load's state machine carries it: boxed, because its actions
/// copy it several times on the way to the owner, and a box is copied with one reference count instead of one per
/// reference-counted field of the exchange.
final class LoadAnswer: Sendable {
    let exchange: HTTPExchange

    init(_ exchange: HTTPExchange) {
        self.exchange = exchange
    }

    /// Gives the connection up unread; the figures so far.
    func abandon() -> RequestMetrics {
        var exchange = self.exchange
        return exchange.abandon()
    }

    /// Reads and drops the body (``HTTPExchange/drain()``); the exchange's final figures.
    nonisolated(nonsending) func drain() async -> RequestMetrics {
        var exchange = self.exchange
        return await exchange.drain()
    }
}

/// A stored response the cache found, as the load's state machine carries it: boxed, so that the machine's actions
/// stay small (an action is as large as its largest payload, and a lookup is hundreds of bytes: every array of
/// actions would move them around).
final class LoadStored: Sendable {
    let lookup: HTTPCache.Lookup

    init(_ lookup: HTTPCache.Lookup) {
        self.lookup = lookup
    }
}
