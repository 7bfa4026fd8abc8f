import Testing

@testable import CourierCache

/// The public codec over the record format: what the fuzz target FuzzRecord drives with hostile bytes.
@Suite struct RecordCodecTests {
    let record = RecordCodec.Record(
        key: Array("https://example.com/a b".utf8), payload: Array("payload".utf8), lockCount: 2,
        ttlNanoseconds: 3_600_000_000_000, storeTime: testEpoch, accessTime: testEpoch + 5
    )

    @Test func aRecordEncodesToWhatDecodesToIt() throws {
        let bytes = RecordCodec.encode(record)
        #expect(bytes.count == 64 + record.key.count + record.payload.count)
        #expect(try RecordCodec.decode(bytes).get() == record)
        #expect(RecordCodec.encode(try RecordCodec.decode(bytes).get()) == bytes)
    }

    /// The flags and the reserved field are covered by the header CRC but were ignored: a file with either set
    /// (and a matching CRC) decoded, and encoding its record gave other bytes. Now it reads as corrupt.
    @Test func setFlagsOrReservedBitsAreCorruptEvenWithAMatchingChecksum() {
        for offset in [12, 15, 52, 55] {
            var bytes = RecordCodec.encode(record)
            bytes[offset] = 0x80
            refreshHeaderCRC(&bytes)
            #expect(RecordCodec.decode(bytes) == .failure(.unknownFields), "byte \(offset)")
        }
    }

    /// FuzzRecord's first finding: a payload size near 2⁶⁴ under a matching header CRC overflowed the file-length
    /// sum and trapped, in every load and scan that met such a file. It is a length mismatch.
    @Test func aPayloadSizeNearTwoToTheSixtyFourIsALengthMismatchNotATrap() {
        var bytes = RecordCodec.encode(record)
        poke(&bytes, 40, UInt64.max - 16)
        refreshHeaderCRC(&bytes)
        #expect(RecordCodec.decode(bytes) == .failure(.payloadSizeMismatch))
    }
}
