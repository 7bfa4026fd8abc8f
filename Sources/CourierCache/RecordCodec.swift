/// The record file format (docs/cache.md, "On-disk format") as pure functions over bytes: what a store writes,
/// and every check it makes before it trusts a file's bytes (all but the file name's hash, which needs the name).
/// For tools that read a store's files themselves, and for the fuzz target (Sources/CourierFuzz/FuzzRecord.swift).
///
/// Decoding is total: no input traps. A file that decodes is exactly the bytes its record encodes to (every
/// field of the header is either a record field, a constant, a length or a checksum), so nothing a decoder
/// accepts is lost by a rewrite.
package enum RecordCodec {
    /// One record file's contents.
    package struct Record: Hashable, Sendable {
        /// The key's UTF-8 bytes (1 byte to 64 KiB).
        package var key: [UInt8]
        package var payload: [UInt8]
        package var lockCount: UInt32
        /// 0 for sliding expiry, else the absolute TTL, in nanoseconds.
        package var ttlNanoseconds: UInt64
        /// Nanoseconds since the Unix epoch.
        package var storeTime: Int64
        /// Nanoseconds since the Unix epoch.
        package var accessTime: Int64

        package init(key: [UInt8], payload: [UInt8], lockCount: UInt32, ttlNanoseconds: UInt64, storeTime: Int64, accessTime: Int64) {
            self.key = key
            self.payload = payload
            self.lockCount = lockCount
            self.ttlNanoseconds = ttlNanoseconds
            self.storeTime = storeTime
            self.accessTime = accessTime
        }
    }

    /// A whole record file's bytes checked and decoded: header, key, length and payload checksum.
    package static func decode(_ file: [UInt8]) -> Result<Record, RecordCorruption> {
        RecordHeader.decodeRecord(file).map { header in
            Record(
                key: header.key, payload: Array(file[header.headerSize...]), lockCount: header.lockCount,
                ttlNanoseconds: header.ttlNanoseconds, storeTime: header.storeTime, accessTime: header.accessTime
            )
        }
    }

    /// The bytes of a record file holding `record`: what a store writes (the key's length is not checked here).
    package static func encode(_ record: Record) -> [UInt8] {
        RecordHeader(
            lockCount: record.lockCount, ttlNanoseconds: record.ttlNanoseconds, storeTime: record.storeTime,
            accessTime: record.accessTime, payloadSize: UInt64(record.payload.count), payloadCRC: CRC32.checksum(record.payload),
            key: record.key
        ).encoded() + record.payload
    }
}
