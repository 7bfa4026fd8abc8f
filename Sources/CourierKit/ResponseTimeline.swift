internal import CourierCore
internal import CourierTransport
public import CourierTLS

/// When a loaded request spent its time: the instants it was queued and done, the time it waited for the rate
/// limiter (Retry-After pauses included) and for its authoriser, summed over attempts, and the transport's
/// phases of the last attempt. The instants and waits are on the service's clock
/// (`DataLoaderService.Configuration.clock`; with a `ManualClock`, its time), the transport's phases in real time.
public struct ResponseTimeline: Hashable, Sendable {
    /// When the loader accepted the request.
    public var queued: ContinuousClock.Instant {
        get { queuedAt.instant }
        set { queuedAt = Deadline(newValue) }
    }
    /// ``queued`` and ``done`` as stored: a `ContinuousClock.Instant` would make the timeline, and so every
    /// `Response`, a value of non-fixed size to the compiler (see `Deadline`).
    var queuedAt: Deadline
    var doneAt: Deadline
    /// Time spent waiting for the rate limiter, summed over attempts.
    public var rateLimitWait: Duration = .zero
    /// Time spent waiting for the authoriser (refreshes included), summed over attempts.
    public var authoriserWait: Duration = .zero
    /// Time spent in back-off between attempts.
    public var backoffWait: Duration = .zero
    /// Name resolution of the last attempt (nil on a reused connection).
    public var dns: Duration?
    /// TCP connect of the last attempt (nil on a reused connection).
    public var connect: Duration?
    /// TLS handshake of the last attempt (nil for plain http).
    public var tls: Duration?
    /// What the TLS session of the last attempt negotiated (version, cipher, ALPN, resumption, the server's
    /// certificate); nil for plain http.
    public var tlsSession: TLSSessionInfo?
    /// From sending the last attempt to its first response byte.
    public var firstByte: Duration?
    /// When the loader finished with the request.
    public var done: ContinuousClock.Instant {
        get { doneAt.instant }
        set { doneAt = Deadline(newValue) }
    }

    /// A timeline that starts when the request was queued; the loader fills in the rest as the load goes.
    public init(queued: ContinuousClock.Instant) {
        self.init(queued: Deadline(queued))
    }

    init(queued: Deadline) {
        self.queuedAt = queued
        self.doneAt = queued
    }

    /// The transport's phases of an attempt whose response head arrived (`metrics`, the exchange's figures).
    mutating func noteHead(_ metrics: RequestMetrics) {
        dns = metrics.dns
        connect = metrics.connect
        tls = metrics.tls
        tlsSession = metrics.tlsSession
        firstByte = metrics.timeToFirstByte
    }

    /// From queued to done.
    public var total: Duration { doneAt - queuedAt }
}
