/// What a read-only check found in one file of the store.
public enum RecordVerdict: Sendable, Hashable {
    /// A record that passes every check made (the payload checksum too, when it was verified).
    case intact(RecordSummary)
    /// A file that fails a check: it would never be returned, and the next load or collection removes it.
    case corrupt(fileName: String, RecordCorruption)
}
