import CourierTestSupport
import Testing

@testable import CourierCache

@Suite(.onThreadsOfTheirOwn) struct RecordHeaderTests {
    static let sample = RecordHeader(
        lockCount: 1, ttlNanoseconds: 7200 * 1_000_000_000, storeTime: testEpoch, accessTime: testEpoch + 5,
        payloadSize: 4, payloadCRC: CRC32.checksum([1, 2, 3, 4]), key: Array("key".utf8)
    )

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    @Test func crcIsZlibCRC32() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([]) == 0)
    }

    @Test func fixedPartHasTheDocumentedLittleEndianLayout() {
        // Computed independently with Python's struct ('<') and zlib.crc32 (docs/cache.md has the table).
        let expected =
            "43435243010040000100000000000000004071618c0600000020b6735a0100000520b6735a01000004000000000000000300000000000000cdfb3cb6700fcae3"
        #expect(Self.hex(Self.sample.encodedFixedPart()) == expected)
        #expect(Self.sample.encoded() == Self.sample.encodedFixedPart() + Array("key".utf8))
    }

    @Test func decodeRoundTripsAndChecksTheWholeRecord() throws {
        let file = Self.sample.encoded() + [1, 2, 3, 4]
        #expect(try RecordHeader.decode(file).get() == Self.sample)
        #expect(try RecordHeader.decodeRecord(file).get() == Self.sample)
    }

    @Test(arguments: [
        (0, RecordCorruption.truncatedHeader), (15, .truncatedHeader), (63, .truncatedHeader), (65, .truncatedHeader),
    ])
    func shortFilesAreTruncated(length: Int, expected: RecordCorruption) {
        let file = Array((Self.sample.encoded() + [1, 2, 3, 4]).prefix(length))
        #expect(RecordHeader.decode(file) == .failure(expected))
    }

    @Test func eachFieldCheckFailsOnItsOwn() {
        let good = Self.sample.encoded() + [1, 2, 3, 4]
        func decoded(_ edit: (inout [UInt8]) -> Void) -> Result<RecordHeader, RecordCorruption> {
            var bytes = good
            edit(&bytes)
            return RecordHeader.decodeRecord(bytes)
        }
        #expect(decoded { poke(&$0, 0, UInt32(0xFFFF_5454)) } == .failure(.badMagic))
        #expect(decoded { poke(&$0, 4, UInt16(2)); refreshHeaderCRC(&$0) } == .failure(.unsupportedVersion(2)))
        #expect(decoded { poke(&$0, 6, UInt16(65)); refreshHeaderCRC(&$0) } == .failure(.badHeaderSize))
        #expect(decoded { poke(&$0, 48, UInt32(0)) } == .failure(.badHeaderSize))
        #expect(decoded { poke(&$0, 48, UInt32(70_000)) } == .failure(.badHeaderSize))
        #expect(decoded { $0[60] &+= 5 } == .failure(.headerChecksumMismatch))
        #expect(decoded { $0[8] = 2 } == .failure(.headerChecksumMismatch))  // lock count edited, CRC not
        #expect(decoded { $0[65] = UInt8(ascii: "E") } == .failure(.headerChecksumMismatch))  // the key is covered
        #expect(decoded { poke(&$0, 40, UInt64(5)); refreshHeaderCRC(&$0) } == .failure(.payloadSizeMismatch))
        #expect(decoded { $0.removeLast() } == .failure(.payloadSizeMismatch))
        #expect(decoded { $0[$0.count - 1] ^= 0x10 } == .failure(.payloadChecksumMismatch))
    }

    @Test func decodeNeverTrapsOnArbitraryBytes() {
        var generator = SeededGenerator(state: 0x5EED)
        let good = Self.sample.encoded() + [1, 2, 3, 4]
        var accepted = 0
        for _ in 0..<20_000 {
            var bytes = good
            // Flip one to four random bytes, or cut the file, or both.
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            if Bool.random(using: &generator) { bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator))) }
            if case .success = RecordHeader.decodeRecord(bytes) { accepted += 1 }
        }
        // A random edit that leaves a record valid must have rewritten a byte with its own value.
        var unchanged = 0
        var replay = SeededGenerator(state: 0x5EED)
        for _ in 0..<20_000 {
            var bytes = good
            for _ in 0..<Int.random(in: 1...4, using: &replay) {
                bytes[Int.random(in: 0..<bytes.count, using: &replay)] = UInt8.random(in: 0...255, using: &replay)
            }
            if Bool.random(using: &replay) { bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &replay))) }
            if bytes == good { unchanged += 1 }
        }
        #expect(accepted == unchanged)
    }
}
