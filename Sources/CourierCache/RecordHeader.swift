/// The header of one record file, and its byte layout (docs/cache.md has the table).
///
/// A record file is the 64-byte fixed header, the key's UTF-8 bytes, then the payload. Every integer is
/// little-endian whatever the host. The header CRC covers bytes 0..<60 and the key, so the access time and
/// lock count (in the fixed part) can be rewritten in place, 64 bytes at offset 0, without touching the
/// payload; the payload has its own CRC, written once when the record is stored.
struct RecordHeader: Hashable, Sendable {
    /// `CCRC`: Courier cache record.
    static let magic: [UInt8] = [0x43, 0x43, 0x52, 0x43]
    /// The one version this build writes and reads.
    static let currentVersion: UInt16 = 1
    /// The size of the fixed part, before the key.
    static let fixedSize = 64
    /// The longest key accepted, in UTF-8 bytes.
    static let maximumKeyBytes = 64 * 1024

    var lockCount: UInt32
    /// 0: sliding expiry from ``accessTime``; otherwise absolute expiry this long after ``storeTime``.
    var ttlNanoseconds: UInt64
    /// Nanoseconds since the Unix epoch when the record was stored.
    var storeTime: Int64
    /// Nanoseconds since the Unix epoch of the last store, load or touch.
    var accessTime: Int64
    var payloadSize: UInt64
    var payloadCRC: UInt32
    var key: [UInt8]

    /// The fixed part plus the key: where the payload starts.
    var headerSize: Int { Self.fixedSize + key.count }
    /// The length the whole file must have.
    /// Saturated: a hostile payload size near 2⁶⁴ (with a matching header CRC) must read as a length mismatch,
    /// not trap (FuzzRecord found it); no file is `UInt64.max` bytes long.
    var fileSize: UInt64 {
        let (sum, overflow) = UInt64(headerSize).addingReportingOverflow(payloadSize)
        return overflow ? .max : sum
    }

    /// The fixed part with its CRC: what an in-place update writes at offset 0.
    func encodedFixedPart() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(Self.fixedSize)
        out.append(contentsOf: Self.magic)
        out.appendLittleEndian(Self.currentVersion)
        out.appendLittleEndian(UInt16(Self.fixedSize))
        out.appendLittleEndian(lockCount)
        out.appendLittleEndian(UInt32(0))  // flags
        out.appendLittleEndian(ttlNanoseconds)
        out.appendLittleEndian(storeTime)
        out.appendLittleEndian(accessTime)
        out.appendLittleEndian(payloadSize)
        out.appendLittleEndian(UInt32(key.count))
        out.appendLittleEndian(UInt32(0))  // reserved
        out.appendLittleEndian(payloadCRC)
        out.appendLittleEndian(CRC32.checksum(key, seed: CRC32.checksum(out)))
        return out
    }

    /// The fixed part and the key: everything before the payload.
    func encoded() -> [UInt8] {
        encodedFixedPart() + key
    }

    /// Reads the header from the start of a file's bytes (the whole file, or at least the fixed part and key).
    ///
    /// Checks, in order: length, magic, version, header and key sizes, header CRC, flags and reserved field (0).
    /// Never traps on any input.
    static func decode(_ bytes: [UInt8]) -> Result<RecordHeader, RecordCorruption> {
        guard bytes.count >= fixedSize else { return .failure(.truncatedHeader) }
        guard Array(bytes[0..<4]) == magic else { return .failure(.badMagic) }
        let version: UInt16 = bytes.littleEndian(at: 4)
        guard version == currentVersion else { return .failure(.unsupportedVersion(version)) }
        let keySize = Int(bytes.littleEndian(at: 48) as UInt32)
        guard bytes.littleEndian(at: 6) as UInt16 == UInt16(fixedSize), keySize > 0, keySize <= maximumKeyBytes else {
            return .failure(.badHeaderSize)
        }
        guard bytes.count >= fixedSize + keySize else { return .failure(.truncatedHeader) }
        let key = Array(bytes[fixedSize..<(fixedSize + keySize)])
        let crc = CRC32.checksum(bytes[fixedSize..<(fixedSize + keySize)], seed: CRC32.checksum(bytes[0..<60]))
        guard crc == bytes.littleEndian(at: 60) as UInt32 else { return .failure(.headerChecksumMismatch) }
        // Checked after the CRC (a torn or rotten header reads as a checksum mismatch): set, they were written on
        // purpose by a writer this version does not understand.
        guard bytes.littleEndian(at: 12) as UInt32 == 0, bytes.littleEndian(at: 52) as UInt32 == 0 else {
            return .failure(.unknownFields)
        }
        return .success(
            RecordHeader(
                lockCount: bytes.littleEndian(at: 8),
                ttlNanoseconds: bytes.littleEndian(at: 16),
                storeTime: bytes.littleEndian(at: 24),
                accessTime: bytes.littleEndian(at: 32),
                payloadSize: bytes.littleEndian(at: 40),
                payloadCRC: bytes.littleEndian(at: 56),
                key: key
            )
        )
    }

    /// Reads a whole record file: the header, then the file length and the payload CRC.
    static func decodeRecord(_ bytes: [UInt8]) -> Result<RecordHeader, RecordCorruption> {
        let header: RecordHeader
        switch decode(bytes) {
        case .failure(let corruption): return .failure(corruption)
        case .success(let decoded): header = decoded
        }
        return check(header, fileSize: bytes.count, payload: bytes[header.headerSize...])
    }

    /// ``decodeRecord(_:)`` for a file read in two parts: `header` (at least the fixed part and the key), the
    /// `payload` after it, and the file's length.
    static func decodeRecord(header bytes: [UInt8], payload: [UInt8], fileSize: Int) -> Result<RecordHeader, RecordCorruption> {
        let header: RecordHeader
        switch decode(bytes) {
        case .failure(let corruption): return .failure(corruption)
        case .success(let decoded): header = decoded
        }
        guard bytes.count == header.headerSize else { return .failure(.payloadSizeMismatch) }
        return check(header, fileSize: fileSize, payload: payload[...])
    }

    /// The checks after the header's own: the file's length, then the payload's CRC.
    private static func check(_ header: RecordHeader, fileSize: Int, payload: ArraySlice<UInt8>) -> Result<RecordHeader, RecordCorruption> {
        guard UInt64(fileSize) == header.fileSize else { return .failure(.payloadSizeMismatch) }
        guard CRC32.checksum(payload) == header.payloadCRC else { return .failure(.payloadChecksumMismatch) }
        return .success(header)
    }
}

extension [UInt8] {
    fileprivate mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }

    fileprivate func littleEndian<T: FixedWidthInteger>(at offset: Int) -> T {
        var value: T = 0
        for index in 0..<MemoryLayout<T>.size {
            value |= T(truncatingIfNeeded: self[offset + index]) << (8 * index)
        }
        return value
    }
}
