internal import CourierCrypto
internal import CourierKit
internal import Foundation
internal import CourierCore
internal import CourierTLS
internal import CourierTransport

/// One line of `courier fetch --json-report`: what happened to one URL.
///
/// The fields are issue 3's contract; `waits` is added by `--policy` runs (the loader's waits for the rate
/// limit, the authoriser and back-off) and is `null` without a policy.
struct FetchReport: Encodable, Sendable {
    struct Timings: Encodable, Sendable {
        var dns: Double?
        var connect: Double?
        var tls: Double?
        var ttfb: Double?
        var total: Double?
    }

    /// Time a `--policy` request spent waiting in the loader, in seconds, summed over its attempts.
    struct Waits: Encodable, Sendable {
        var rateLimit: Double
        var authoriser: Double
        var backoff: Double
    }

    /// What the TLS session negotiated; nil (`null`) for plain http.
    struct TLSInfo: Encodable, Sendable {
        var version: String
        var cipher: String
        var alpn: String?
        var resumed: Bool

        init(_ session: TLSSessionInfo) {
            version = session.version
            cipher = session.cipher
            alpn = session.alpn
            resumed = session.resumed
        }
    }

    struct ErrorInfo: Encodable, Sendable {
        var kind: String
        var message: String
    }

    var url: String
    var status: Int?
    /// `[name, value]` pairs in the order received.
    var headers: [[String]] = []
    var bodyBytes = 0
    var bodySHA256: String?
    var attempts = 1
    var redirects = 0
    var timings = Timings()
    var bytesSent: Int64 = 0
    var bytesReceived: Int64 = 0
    var waits: Waits?
    var tls: TLSInfo?
    var error: ErrorInfo?
    /// How the HTTP cache took part (`--cache-dir`): hit, miss, revalidated, stale or coalesced; nil without it.
    var cache: String?

    /// A URL that was never sent (it is not an absolute http or https URL, or was refused before sending).
    init(url: String, error: CourierError?) {
        self.url = url
        self.error = error.map(ErrorInfo.init)
    }

    /// A request made directly on the transport (no `--policy`): `response` is nil when none arrived.
    init(
        url: String, response: StreamingResponse?, bodyBytes: Int, digest: [UInt8]?, metrics: RequestMetrics,
        total: Duration, error: CourierError?
    ) {
        self.url = url
        self.status = response?.status
        self.headers = response?.headers.map { [$0.name, $0.value] } ?? []
        self.bodyBytes = bodyBytes
        self.bodySHA256 = digest.map(SHA256.hex)
        self.attempts = max(1, metrics.attempts)
        self.redirects = metrics.redirects
        self.timings = Timings(
            dns: metrics.dns?.seconds, connect: metrics.connect?.seconds, tls: metrics.tls?.seconds,
            ttfb: metrics.timeToFirstByte?.seconds, total: (metrics.total ?? total).seconds
        )
        self.bytesSent = metrics.bytesSent
        self.bytesReceived = metrics.bytesReceived
        self.tls = metrics.tlsSession.map(TLSInfo.init)
        self.error = error.map(ErrorInfo.init)
    }

    /// A request the data loader answered (`--policy`): attempts, timings and wire counts are the loader's.
    init(url: String, loaded response: Response) {
        self.url = url
        self.status = response.status
        self.headers = response.headers.map { [$0.name, $0.value] }
        self.bodyBytes = response.body.count
        self.bodySHA256 = SHA256.hex(SHA256.hash(response.body))
        // 0 for an answer from the cache that sent nothing (a fresh hit).
        self.attempts = response.attempts
        self.redirects = response.redirects
        let timeline = response.timeline
        self.timings = Timings(
            dns: timeline.dns?.seconds, connect: timeline.connect?.seconds, tls: timeline.tls?.seconds,
            ttfb: timeline.firstByte?.seconds, total: timeline.total.seconds
        )
        self.bytesSent = response.bytesSent
        self.bytesReceived = response.bytesReceived
        self.tls = timeline.tlsSession.map(TLSInfo.init)
        self.waits = Waits(
            rateLimit: timeline.rateLimitWait.seconds, authoriser: timeline.authoriserWait.seconds,
            backoff: timeline.backoffWait.seconds
        )
        self.cache = response.cache?.rawValue
    }

    /// A request the data loader failed (`--policy`) after `attempts` attempts, having moved `bytes` over the
    /// wire, `total` after it was given to the loader.
    init(url: String, failure: CourierError, attempts: Int, bytes: (sent: Int64, received: Int64), total: Duration) {
        self.url = url
        self.attempts = max(1, attempts)
        self.timings = Timings(total: total.seconds)
        self.bytesSent = bytes.sent
        self.bytesReceived = bytes.received
        self.error = ErrorInfo(failure)
    }

    /// One JSON line (keys in a stable order; absent values are `null`).
    func jsonLine() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(NullPreserving(self))) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}

extension FetchReport.ErrorInfo {
    init(_ error: CourierError) {
        self.init(kind: error.kind.rawValue, message: error.description)
    }
}

/// Encodes optionals as explicit `null` (the report's readers expect every key).
private struct NullPreserving: Encodable {
    let report: FetchReport
    init(_ report: FetchReport) { self.report = report }

    enum Keys: String, CodingKey {
        case url, status, headers, bodyBytes, bodySHA256, attempts, redirects, timings, bytesSent, bytesReceived,
            waits, tls, error, cache
    }
    enum TimingKeys: String, CodingKey { case dns, connect, tls, ttfb, total }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(report.url, forKey: .url)
        try c.encode(report.status, forKey: .status)
        try c.encode(report.headers, forKey: .headers)
        try c.encode(report.bodyBytes, forKey: .bodyBytes)
        try c.encode(report.bodySHA256, forKey: .bodySHA256)
        try c.encode(report.attempts, forKey: .attempts)
        try c.encode(report.redirects, forKey: .redirects)
        var t = c.nestedContainer(keyedBy: TimingKeys.self, forKey: .timings)
        try t.encode(report.timings.dns, forKey: .dns)
        try t.encode(report.timings.connect, forKey: .connect)
        try t.encode(report.timings.tls, forKey: .tls)
        try t.encode(report.timings.ttfb, forKey: .ttfb)
        try t.encode(report.timings.total, forKey: .total)
        try c.encode(report.bytesSent, forKey: .bytesSent)
        try c.encode(report.bytesReceived, forKey: .bytesReceived)
        try c.encode(report.waits, forKey: .waits)
        try c.encode(report.tls, forKey: .tls)
        try c.encode(report.error, forKey: .error)
        try c.encode(report.cache, forKey: .cache)
    }
}
