import CourierKit
import Foundation

/// One line of `courier fetch --json-report`: what happened to one URL.
struct FetchReport: Encodable {
    struct Timings: Encodable {
        var dns: Double?
        var connect: Double?
        var tls: Double?
        var ttfb: Double?
        var total: Double?
    }

    struct ErrorInfo: Encodable {
        var kind: String
        var message: String
    }

    var url: String
    var status: Int?
    /// `[name, value]` pairs in the order received.
    var headers: [[String]]
    var bodyBytes: Int
    var bodySHA256: String?
    var attempts: Int
    var redirects: Int
    var timings: Timings
    var bytesSent: Int64
    var bytesReceived: Int64
    var error: ErrorInfo?

    init(url: String, response: StreamingResponse?, bodyBytes: Int, digest: [UInt8]?, metrics: RequestMetrics, total: Duration, error: CourierError?) {
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
        self.error = error.map { ErrorInfo(kind: $0.kind.rawValue, message: $0.description) }
    }

    /// One JSON line (keys in a stable order; absent values are `null`).
    func jsonLine() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(NullPreserving(self))) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}

/// Encodes optionals as explicit `null` (the report's readers expect every key).
private struct NullPreserving: Encodable {
    let report: FetchReport
    init(_ report: FetchReport) { self.report = report }

    enum Keys: String, CodingKey {
        case url, status, headers, bodyBytes, bodySHA256, attempts, redirects, timings, bytesSent, bytesReceived, error
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
        try c.encode(report.error, forKey: .error)
    }
}
