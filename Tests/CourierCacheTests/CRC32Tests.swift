import CCourierZlib
import CourierTestSupport
import Testing

@testable import CourierCache

/// The record checksum folds with carry-less multiplication where the CPU has it; every value must still be
/// zlib's `crc32`, the format's definition: over every length up to 1 KiB (below, at and past each 16- and
/// 64-byte boundary of the folding loops), every alignment of the start, seeds carried over from earlier
/// input, and payload sizes as large as the bench's.
@Suite(.onThreadsOfTheirOwn) struct CRC32Tests {
    /// zlib's answer, the reference.
    static func zlibCRC(_ bytes: ArraySlice<UInt8>, seed: UInt32) -> UInt32 {
        bytes.withUnsafeBufferPointer { UInt32(truncatingIfNeeded: crc32(uLong(seed), $0.baseAddress, uInt($0.count))) }
    }

    /// Deterministic bytes that are not a repeating pattern (xorshift).
    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed | 1
        return (0..<count).map { _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state >> 24)
        }
    }

    @Test func everyLengthAndAlignmentMatchesZlib() {
        let data = Self.bytes(1024 + 16, seed: 42)
        for offset in 0..<16 {
            for length in 0...(1024) {
                let slice = data[offset..<(offset + length)]
                for seed: UInt32 in [0, 0xDEAD_BEEF] {
                    let ours = CRC32.checksum(slice, seed: seed)
                    let zlib = Self.zlibCRC(slice, seed: seed)
                    if ours != zlib {
                        Issue.record("offset \(offset), length \(length), seed \(seed): \(ours) != zlib's \(zlib)")
                        return
                    }
                }
            }
        }
    }

    @Test(arguments: [4096, 65_536 + 13, 262_144, 262_144 + 7, 2 << 20])
    func largePayloadsMatchZlib(length: Int) {
        let data = Self.bytes(length, seed: UInt64(length))
        #expect(CRC32.checksum(data) == Self.zlibCRC(data[...], seed: 0))
        // Split anywhere, the CRC of the second part continued from the first is the CRC of the whole.
        let cut = length / 3 + 5
        #expect(CRC32.checksum(data[cut...], seed: CRC32.checksum(data[..<cut])) == CRC32.checksum(data))
    }

    @Test func knownValues() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([]) == 0)
        // 64 zero bytes: the smallest input the folding path takes (zlib.crc32(bytes(64)) in Python).
        #expect(CRC32.checksum([UInt8](repeating: 0, count: 64)) == 0x758D_6336)
    }
}
