import CCourierZlib
import CourierHTTP1
import CourierTestSupport
import Testing

/// Compresses with zlib itself: windowBits 31 = gzip, 15 = zlib-wrapped deflate, -15 = raw deflate.
func compress(_ input: [UInt8], windowBits: Int32, level: Int32 = 6) -> [UInt8] {
    var stream = z_stream()
    let rc = deflateInit2_(&stream, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
    precondition(rc == Z_OK)
    defer { deflateEnd(&stream) }
    var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(input.count))) + 64)
    var produced = 0
    input.withUnsafeBufferPointer { inp in
        output.withUnsafeMutableBufferPointer { out in
            stream.next_in = UnsafeMutablePointer(mutating: inp.baseAddress)
            stream.avail_in = UInt32(inp.count)
            stream.next_out = out.baseAddress
            stream.avail_out = UInt32(out.count)
            let result = deflate(&stream, Z_FINISH)
            precondition(result == Z_STREAM_END)
            produced = out.count - Int(stream.avail_out)
        }
    }
    return Array(output.prefix(produced))
}

func decodeAll(_ coding: ContentCoding, _ input: [UInt8], pieceSize: Int, limit: Int = 1 << 30) throws(ContentDecodingError)
    -> [UInt8]
{
    let decoder = try ContentDecoder(coding: coding, maxDecodedBytes: limit)
    var output: [UInt8] = []
    var start = 0
    while start < input.count {
        let end = min(input.count, start + pieceSize)
        output += try decoder.decode(input[start..<end])
        start = end
    }
    try decoder.finish()
    return output
}

@Suite(.onThreadsOfTheirOwn) struct ContentDecoderTests {
    static let text = Array(String(repeating: "Courier loads data over HTTP/1.1. ", count: 400).utf8)
    static let noise: [UInt8] = {
        var rng = SplitMix64(seed: 7)
        return (0..<50_000).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }()

    @Test func gzipVectorFromTheGzipTool() throws {
        // `printf 'hello, courier\n' | gzip -n -9`
        let vector: [UInt8] = [
            31, 139, 8, 0, 0, 0, 0, 0, 2, 3, 203, 72, 205, 201, 201, 215, 81, 72, 206, 47, 45, 202, 76, 45, 226, 2, 0,
            73, 221, 62, 241, 15, 0, 0, 0,
        ]
        for piece in [1, 2, 7, vector.count] {
            #expect(try decodeAll(.gzip, vector, pieceSize: piece) == Array("hello, courier\n".utf8))
        }
    }

    @Test(arguments: [(ContentCoding.gzip, Int32(31)), (.deflate, 15), (.deflate, -15), (.gzip, 15)])
    func roundTripsInAnySplit(_ coding: ContentCoding, _ windowBits: Int32) throws {
        for input in [Self.text, Self.noise, [UInt8]("x".utf8)] {
            let compressed = compress(input, windowBits: windowBits)
            for piece in [1, 3, 1000, compressed.count] {
                #expect(try decodeAll(coding, compressed, pieceSize: piece) == input, "\(coding) \(windowBits) piece \(piece)")
            }
        }
    }

    @Test func emptyBodyIsEmpty() throws {
        #expect(try decodeAll(.gzip, [], pieceSize: 1) == [])
        #expect(try decodeAll(.deflate, [], pieceSize: 1) == [])
        // A compressed empty body decodes to nothing too.
        #expect(try decodeAll(.gzip, compress([], windowBits: 31), pieceSize: 1) == [])
    }

    @Test func concatenatedGzipMembers() throws {
        let body = compress(Array("first ".utf8), windowBits: 31) + compress(Array("second".utf8), windowBits: 31)
        for piece in [1, 5, body.count] {
            #expect(try decodeAll(.gzip, body, pieceSize: piece) == Array("first second".utf8))
        }
    }

    @Test func decodedSizeIsBounded() throws {
        // 16 MiB of zeros compress to a few KiB: a small bomb.
        let bomb = compress([UInt8](repeating: 0, count: 16 << 20), windowBits: 31, level: 9)
        #expect(bomb.count < 64 * 1024)
        #expect(throws: ContentDecodingError(.decodedBodyTooLarge(limit: 1 << 20), coding: .gzip)) {
            try decodeAll(.gzip, bomb, pieceSize: 4096, limit: 1 << 20)
        }
        // Exactly at the limit is fine.
        let exact = compress([UInt8](repeating: 1, count: 1000), windowBits: 15)
        #expect(try decodeAll(.deflate, exact, pieceSize: 10, limit: 1000).count == 1000)
        #expect(throws: ContentDecodingError(.decodedBodyTooLarge(limit: 999), coding: .deflate)) {
            try decodeAll(.deflate, exact, pieceSize: 10, limit: 999)
        }
    }

    @Test func truncatedStreams() {
        for (coding, bits) in [(ContentCoding.gzip, Int32(31)), (.deflate, 15), (.deflate, -15)] {
            let full = compress(Self.text, windowBits: bits)
            for cut in [1, 2, full.count / 2, full.count - 1] {
                #expect(throws: ContentDecodingError(.truncatedStream, coding: coding), "\(coding) \(bits) cut \(cut)") {
                    try decodeAll(coding, Array(full.prefix(cut)), pieceSize: 100)
                }
            }
        }
    }

    @Test func corruptStreams() {
        var gzip = compress(Self.text, windowBits: 31)
        gzip[gzip.count - 6] ^= 0xFF  // the CRC-32 in the trailer
        #expect(throws: ContentDecodingError.self) { try decodeAll(.gzip, gzip, pieceSize: 64) }
        do {
            _ = try decodeAll(.gzip, gzip, pieceSize: 64)
        } catch {
            guard case .corruptStream(let message) = error.reason else {
                Issue.record("expected corruptStream, got \(error)")
                return
            }
            #expect(message.contains("check"))
        }
        let notGzip = Array("this is plain text, not gzip".utf8)
        #expect(throws: ContentDecodingError.self) { try decodeAll(.gzip, notGzip, pieceSize: 5) }
        var zlib = compress(Self.text, windowBits: 15)
        zlib[zlib.count - 1] ^= 0x01  // the Adler-32
        #expect(throws: ContentDecodingError.self) { try decodeAll(.deflate, zlib, pieceSize: 64) }
    }

    @Test func trailingGarbage() {
        let deflate = compress(Self.text, windowBits: 15) + [1, 2, 3]
        #expect(throws: ContentDecodingError(.trailingData, coding: .deflate)) { try decodeAll(.deflate, deflate, pieceSize: 7) }
        let gzip = compress(Self.text, windowBits: 31) + [0x42]
        #expect(throws: ContentDecodingError(.trailingData, coding: .gzip)) { try decodeAll(.gzip, gzip, pieceSize: 1) }
    }

    @Test func codingTokens() {
        #expect(ContentCoding(token: "GZIP") == .gzip)
        #expect(ContentCoding(token: "x-gzip") == .gzip)
        #expect(ContentCoding(token: "deflate") == .deflate)
        #expect(ContentCoding(token: "br") == nil)
        #expect(ContentCoding(token: "identity") == nil)
    }
}
