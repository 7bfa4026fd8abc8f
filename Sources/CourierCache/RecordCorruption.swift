/// Why a file in the store is not a valid record. A corrupt record is never returned: it reads as missing, is
/// removed and counted in ``CacheStatistics/corruptRecordsRemoved``.
public enum RecordCorruption: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file is shorter than the fixed header, or than the header plus the key it announces.
    case truncatedHeader
    /// The first four bytes are not `CCRC`.
    case badMagic
    /// A format version this build does not read.
    case unsupportedVersion(UInt16)
    /// The header-size field is not 64, or the key size is 0 or over `RecordHeader.maximumKeyBytes`.
    case badHeaderSize
    /// The CRC-32 over the fixed header and the key does not match.
    case headerChecksumMismatch
    /// The flags or the reserved field are not 0: a field this version does not know (and that a rewrite of the
    /// header would lose) is set.
    case unknownFields
    /// The key in the header is not the key asked for, or its hash is not the file's name (a moved file or,
    /// in theory, a SHA-256 collision).
    case keyMismatch
    /// The file's length is not header + key + the payload size the header gives.
    case payloadSizeMismatch
    /// The CRC-32 over the payload does not match.
    case payloadChecksumMismatch

    /// What is wrong with the record, in a few words.
    public var description: String {
        switch self {
        case .truncatedHeader: return "truncated header"
        case .badMagic: return "bad magic"
        case .unsupportedVersion(let version): return "unsupported version \(version)"
        case .badHeaderSize: return "bad header or key size"
        case .headerChecksumMismatch: return "header checksum mismatch"
        case .unknownFields: return "unknown flags or reserved bits set"
        case .keyMismatch: return "key mismatch"
        case .payloadSizeMismatch: return "payload size mismatch"
        case .payloadChecksumMismatch: return "payload checksum mismatch"
        }
    }
}
