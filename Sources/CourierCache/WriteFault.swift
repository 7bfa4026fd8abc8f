import CourierCore

/// A test seam: makes the next temporary-file write of a store stop after some bytes, either failing as the
/// file system would (`ENOSPC`, `EIO`: the writer cleans up) or as if the process had been killed (the
/// writer abandons the temporary file, as `kill -9` would leave it).
struct WriteFault: Sendable {
    enum Kind: Sendable {
        case fail(errno: Int32)
        case crash
    }

    var afterBytes: Int
    var kind: Kind

    /// Thrown out of the writer by ``Kind/crash``: nothing after this point ran, as after `SIGKILL`.
    static let crashMarker = SystemCallError(call: "simulated-crash", errno: 0)
}
