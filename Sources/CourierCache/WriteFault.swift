internal import CourierCore

/// A test seam: makes the next temporary-file write of a store stop after some bytes, either failing as the
/// file system would (`ENOSPC`, `EIO`: the writer cleans up) or as if the process had been killed (the
/// writer abandons the temporary file, as `kill -9` would leave it); or lets the write through and fails the
/// `.durable` store's `fsync` of the file instead.
struct WriteFault: Sendable {
    enum Kind: Sendable {
        case fail(errno: Int32)
        case crash
        /// The file's `fsync` fails with this errno (`afterBytes` is ignored: the whole record is written).
        case failSync(errno: Int32)
    }

    var afterBytes: Int
    var kind: Kind

    /// How many bytes of the record the write lets through.
    var writeBudget: Int {
        if case .failSync = kind { return .max }
        return afterBytes
    }

    /// Thrown out of the writer by ``Kind/crash``: nothing after this point ran, as after `SIGKILL`.
    static let crashMarker = SystemCallError(call: "simulated-crash", errno: 0)
}
