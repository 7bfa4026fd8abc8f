import CourierCore
import CourierHTTP1
import CourierTestSupport
import Testing

/// Bounded random-input testing with fixed seeds: mutated and random responses never crash the parser, never
/// make it loop, never report more body bytes than were fed, and give the same result whatever the split.
@Suite(.onThreadsOfTheirOwn) struct ResponseParserRandomInputTests {
    static let seeds: [String] = [
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nServer: x\r\n\r\nhello",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b\r\nhello\r\n6\r\n world\r\n0\r\nT: 1\r\n\r\n",
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx",
        "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nclose delimited body",
        "HTTP/1.1 304 Not Modified\r\nETag: \"abc\"\r\nConnection: close\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 3, 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
    ]

    static let interesting: [UInt8] = Array("\r\n:; \t0123456789abcdefABCDEF,HTTP/1.\u{0}\u{7F}".utf8) + [0x80, 0xFF]

    static func mutate(_ input: [UInt8], using rng: inout SplitMix64) -> [UInt8] {
        var bytes = input
        let rounds = Int.random(in: 1...4, using: &rng)
        for _ in 0..<rounds {
            let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &rng)
            switch Int.random(in: 0..<6, using: &rng) {
            case 0 where !bytes.isEmpty:
                bytes[position] = interesting.randomElement(using: &rng)!
            case 1:
                bytes.insert(interesting.randomElement(using: &rng)!, at: position)
            case 2 where !bytes.isEmpty:
                let end = min(bytes.count, position + Int.random(in: 1...8, using: &rng))
                bytes.removeSubrange(position..<end)
            case 3 where !bytes.isEmpty:
                bytes[position] = UInt8.random(in: 0...255, using: &rng)
            case 4 where !bytes.isEmpty:
                let end = min(bytes.count, position + Int.random(in: 1...16, using: &rng))
                bytes.insert(contentsOf: bytes[position..<end], at: position)
            default:
                bytes = Array(bytes.prefix(position))
            }
        }
        return bytes
    }

    static func randomSplit(_ bytes: [UInt8], using rng: inout SplitMix64) -> [ArraySlice<UInt8>] {
        var pieces: [ArraySlice<UInt8>] = []
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + Int.random(in: 1...12, using: &rng))
            pieces.append(bytes[start..<end])
            start = end
        }
        return pieces
    }

    @Test func twentyThousandMutatedAndRandomInputs() async {
        // 20,000 parses take seconds in a debug build: off the cooperative pool (see offThePool).
        let (failure, outcomes) = await offThePool { () -> (String?, [String: Int]) in
            var rng = SplitMix64(seed: 0x436F_7572_6965_72)
            let methods: [HTTPMethod] = [.get, .head, .post]
            let limits = ResponseParser.Limits(
                maxHeadBytes: 200,
                maxHeaderCount: 6,
                maxChunkExtensionBytes: 16,
                maxTrailerBytes: 40,
                maxInterimResponses: 2
            )
            var outcomes: [String: Int] = [:]
            for i in 0..<20_000 {
                let input: [UInt8]
                if i % 10 == 0 {
                    input = (0..<Int.random(in: 0...80, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                } else {
                    input = Self.mutate(Array(Self.seeds[i % Self.seeds.count].utf8), using: &rng)
                }
                let method = methods[i % methods.count]
                let eof = i % 2 == 0
                let whole = parseWhole(input, method: method, limits: limits, eof: eof)
                let split = parsePieces(Self.randomSplit(input, using: &rng), method: method, limits: limits, eof: eof)
                if whole != split {
                    return ("input \(i) \(String(decoding: input, as: UTF8.self).debugDescription): \(whole) != \(split)", outcomes)
                }
                var bodyBytes = 0
                for case .body(let b) in whole { bodyBytes += b.count }
                if bodyBytes > input.count { return ("input \(i): \(bodyBytes) body bytes from \(input.count) input bytes", outcomes) }
                if let reason = errorReason(whole) {
                    outcomes["\(reason)".prefix(while: { $0 != "(" }).description, default: 0] += 1
                } else {
                    outcomes[whole.last == nil ? "incomplete" : "events", default: 0] += 1
                }
            }
            return (nil, outcomes)
        }
        #expect(failure == nil, "\(failure ?? "")")
        // The generator must reach both successful parses and many different errors.
        #expect(outcomes["events", default: 0] > 500)
        #expect(outcomes.count > 15, "\(outcomes)")
    }

    @Test func pureNoiseFedByteByByte() {
        var rng = SplitMix64(seed: 42)
        for _ in 0..<500 {
            let input = (0..<Int.random(in: 0...300, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let whole = parseWhole(input, eof: true)
            let bytewise = parsePieces(input.indices.map { input[$0..<($0 + 1)] }, eof: true)
            #expect(whole == bytewise)
            // Noise ends in an error or, rarely, a valid message; never silently in nothing at EOF.
            #expect(!whole.isEmpty)
        }
    }
}
