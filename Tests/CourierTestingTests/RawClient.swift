#if canImport(Glibc)
import Glibc
#endif
import CourierHTTP1
import CourierPosix

/// A client that shows what `HTTPClient` hides: the bytes as they arrive on the socket, and when.
struct RawClient {
    struct Arrival {
        var bytes: [UInt8]
        var at: ContinuousClock.Instant
    }

    /// Sends `request` to 127.0.0.1:`port` and reads until the server closes (or `stopAfter` says enough),
    /// bounded by `timeout` per read.
    static func exchange(
        _ request: String, port: Int, timeout: Duration = .seconds(10), stopAfter: ([UInt8]) -> Bool = { _ in false }
    ) async throws -> (sentAt: ContinuousClock.Instant, arrivals: [Arrival]) {
        let connection = try await TCPConnection.connect(host: "127.0.0.1", port: port, on: EventLoopGroup.shared.next())
        defer { connection.close() }
        let sentAt = ContinuousClock.now
        try await connection.write(Array(request.utf8), timeout: timeout)
        var arrivals: [Arrival] = []
        var all: [UInt8] = []
        for _ in 0..<10_000 {
            let bytes = try await connection.read(maxBytes: 64 * 1024, timeout: timeout)
            if bytes.isEmpty { break }
            arrivals.append(Arrival(bytes: bytes, at: .now))
            all += bytes
            if stopAfter(all) { break }
        }
        return (sentAt, arrivals)
    }

    /// The body events of one response over `arrivals`, each with the arrival that completed it.
    static func bodyPieces(_ arrivals: [Arrival]) throws -> [(bytes: [UInt8], at: ContinuousClock.Instant)] {
        var parser = ResponseParser()
        var pieces: [(bytes: [UInt8], at: ContinuousClock.Instant)] = []
        for arrival in arrivals {
            parser.feed(arrival.bytes)
            while let event = try parser.next() {
                if case .body(let bytes) = event { pieces.append((Array(bytes), arrival.at)) }
            }
        }
        return pieces
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

enum FileProbe {
    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }
}
