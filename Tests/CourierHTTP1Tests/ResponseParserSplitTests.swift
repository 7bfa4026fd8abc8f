import CourierCore
import CourierHTTP1
import CourierTestSupport
import Testing

/// Every message, valid or not, must give the same events (and the same error, at the same offset) however
/// its bytes are split across feeds.
@Suite(.onThreadsOfTheirOwn) struct ResponseParserSplitTests {
    struct Vector: CustomStringConvertible {
        var bytes: [UInt8]
        var method: HTTPMethod = .get
        var eof = false
        var limits = ResponseParser.Limits()
        var description: String { String(decoding: bytes.prefix(60), as: UTF8.self).debugDescription }
    }

    static let small = ResponseParser.Limits(
        maxHeadBytes: 90,
        maxHeaderCount: 4,
        maxChunkExtensionBytes: 8,
        maxTrailerBytes: 20,
        maxInterimResponses: 1
    )

    static let vectors: [Vector] = {
        let te = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        var v: [Vector] = [
            Vector(bytes: [UInt8]("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nServer: x\r\n\r\nhello")),
            Vector(bytes: [UInt8](te + "5;a=b\r\nhello\r\n6\r\n world\r\n0\r\nT: 1\r\n\r\n")),
            Vector(bytes: [UInt8](te + "5\r\nhello\r\n0\r\n\r\n")),
            Vector(bytes: [UInt8]("HTTP/1.1 200 OK\r\nContent-Type: a\r\n\r\nclose delimited"), eof: true),
            Vector(bytes: [UInt8]("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok")),
            Vector(bytes: [UInt8]("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx")),
            Vector(bytes: [UInt8]("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n"), method: .head),
            Vector(bytes: [UInt8]("HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n")),
            Vector(bytes: [UInt8]("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")),
            // obs-fold, unfolded (RFC 9112 §5.2), in a plain field, a framing field and a trailer.
            Vector(bytes: [UInt8]("HTTP/1.1 200 OK\r\nA: 1\r\n  folded \r\n\tagain\r\nContent-Length: 2\r\n\r\nok")),
            Vector(bytes: [UInt8]("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n , 3\r\nConnection: x,\r\n close\r\n\r\nabc")),
            Vector(bytes: [UInt8](te + "1\r\nx\r\n0\r\nT: a\r\n\tb\r\n\r\n")),
            // Errors.
            Vector(bytes: [UInt8]("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxx")),
            Vector(bytes: [UInt8]("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n")),
            Vector(bytes: [UInt8]("HTTP/1.1 200 OK\r\nTransfer-Encoding: br\r\n\r\n")),
            Vector(bytes: [UInt8]("HTTP/1.1 200 OK\r\n  folded\r\n\r\n")),
            Vector(bytes: [UInt8]("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n 0\r\n\r\nx")),
            Vector(bytes: [UInt8]("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n , gzip\r\n\r\n")),
            Vector(bytes: [UInt8]("HTTP/1.1 200 OK\r\nA: 1\r\n a\u{7F}\r\n\r\n")),
            Vector(bytes: [UInt8]("HTTP/1.1 200 OK\r\nA : 1\r\n\r\n")),
            Vector(bytes: [UInt8]("HTTP/1.1 200 OK\r\nA: 1\u{0}\r\n\r\n")),
            Vector(bytes: [UInt8]("HTTP/1.1 200 OK\nA: 1\r\n\r\n")),
            Vector(bytes: [UInt8]("HTTP/1.1 2x0 OK\r\n\r\n")),
            Vector(bytes: [UInt8]("HTTP/1.1 101 Switching Protocols\r\n\r\n")),
            Vector(bytes: [UInt8](te + "zz\r\n")),
            Vector(bytes: [UInt8](te + "fffffffffffffffffff\r\n")),
            Vector(bytes: [UInt8](te + "3\r\nabcde\r\n")),
            Vector(bytes: [UInt8](te + "3\r\nab"), eof: true),
            Vector(bytes: [UInt8]("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"), eof: true),
            Vector(bytes: [UInt8]("HTTP/1.1 200 OK\r\nConte"), eof: true),
            Vector(bytes: [], eof: true),
            // Limits.
            Vector(bytes: [UInt8]("HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\nE: 5\r\n\r\n"), limits: small),
            Vector(bytes: [UInt8]("HTTP/1.1 200 OK\r\nX: " + String(repeating: "v", count: 100) + "\r\n\r\n"), limits: small),
            Vector(bytes: [UInt8](te + "1;" + String(repeating: "e", count: 20) + "\r\nx\r\n0\r\n\r\n"), limits: small),
            Vector(bytes: [UInt8](te + String(repeating: "0", count: 100) + "1\r\nx\r\n0\r\n\r\n"), limits: small),
            Vector(bytes: [UInt8](te + "0\r\nTrailer: " + String(repeating: "t", count: 30) + "\r\n\r\n"), limits: small),
            Vector(
                bytes: [UInt8](String(repeating: "HTTP/1.1 103 Early Hints\r\n\r\n", count: 2) + "HTTP/1.1 204 No\r\n\r\n"),
                limits: small
            ),
        ]
        // A binary body of every byte value.
        let binary = (0...255).map { UInt8($0) }
        v.append(Vector(bytes: [UInt8]("HTTP/1.1 200 OK\r\nContent-Length: 256\r\n\r\n") + binary))
        return v
    }()

    @Test(arguments: vectors)
    func everyTwoWaySplitGivesTheSameEvents(_ vector: Vector) {
        let reference = parseWhole(vector.bytes, method: vector.method, limits: vector.limits, eof: vector.eof)
        #expect(!reference.isEmpty)
        for cut in 0...vector.bytes.count {
            let pieces = [vector.bytes[..<cut], vector.bytes[cut...]]
            let events = parsePieces(pieces, method: vector.method, limits: vector.limits, eof: vector.eof)
            #expect(events == reference, "split at \(cut)")
            if events != reference { return }
        }
    }

    @Test(arguments: vectors)
    func byteByByteGivesTheSameEvents(_ vector: Vector) {
        let reference = parseWhole(vector.bytes, method: vector.method, limits: vector.limits, eof: vector.eof)
        let pieces = vector.bytes.indices.map { vector.bytes[$0..<($0 + 1)] }
        #expect(parsePieces(pieces, method: vector.method, limits: vector.limits, eof: vector.eof) == reference)
    }

    @Test(arguments: vectors)
    func everyThreeWaySplitGivesTheSameEvents(_ vector: Vector) {
        guard vector.bytes.count <= 120 else { return }
        let reference = parseWhole(vector.bytes, method: vector.method, limits: vector.limits, eof: vector.eof)
        let n = vector.bytes.count
        for a in 0...n {
            for b in a...n {
                let pieces = [vector.bytes[..<a], vector.bytes[a..<b], vector.bytes[b...]]
                let events = parsePieces(pieces, method: vector.method, limits: vector.limits, eof: vector.eof)
                if events != reference {
                    Issue.record("split at \(a), \(b): \(events) != \(reference)")
                    return
                }
            }
        }
    }
}
