/// What a load found under a key, said in full for callers that report it (``RecordStore/loadWithFingerprint(_:)``):
/// the record and its file's fingerprint, nothing, or a corrupt file that the load removed.
package enum RecordLoad: Sendable {
    /// The record; the fingerprint is nil where the file system records no birth time.
    case found(CacheRecord, RecordFingerprint?)
    /// No record, or one that expired.
    case missing
    /// The file failed a check (`why`) and was removed; it reads as missing.
    case removedCorrupt(RecordCorruption)

    /// The record, when one was found.
    package var record: CacheRecord? {
        if case .found(let record, _) = self { return record }
        return nil
    }
}
