#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// A system call failed with an `errno` that is not "would block" and not a programming error.
///
/// Its description reads `'connect' failed: (111) Connection refused`.
package struct SystemCallError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The name of the failing call, e.g. `connect`.
    package let call: String
    /// The `errno` value the call left behind.
    package let errno: Int32

    /// Creates an error for `call` failing with `errno`.
    package init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    /// The C library's text for `errno`, e.g. `Connection refused`.
    package var errnoDescription: String {
        var buffer = [CChar](repeating: 0, count: 256)
        let result = buffer.withUnsafeMutableBufferPointer { strerror_r(errno, $0.baseAddress!, $0.count) }
        guard result == 0 else { return "errno \(errno)" }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    package var description: String {
        "'\(call)' failed: (\(errno)) \(errnoDescription)"
    }
}
