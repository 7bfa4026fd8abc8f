/// A system call failed with an `errno` that is not "would block" and not a programming error.
///
/// Its description reads `'connect' failed: (111) Connection refused`.
public struct SystemCallError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The name of the failing call, e.g. `connect`.
    public let call: String
    /// The `errno` value the call left behind.
    public let errno: Int32

    /// Creates an error for `call` failing with `errno`.
    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    /// The C library's text for `errno`, e.g. `Connection refused`.
    public var errnoDescription: String {
        Syscall.errnoMessage(errno)
    }

    public var description: String {
        "'\(call)' failed: (\(errno)) \(errnoDescription)"
    }
}
