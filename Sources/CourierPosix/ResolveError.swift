internal import CCourierPosix
internal import Glibc
internal import CourierCore

/// Name resolution failed: `getaddrinfo` returned an `EAI_*` code, or the answer held no usable address.
///
/// Its description reads `resolving 'nope.invalid' failed: (-2) Name or service not known`.
package struct ResolveError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The `EAI_*` code (negative on glibc), or 0 when the lookup succeeded but held no TCP address.
    package let code: Int32
    /// For `EAI_SYSTEM`, the `errno` behind it; otherwise 0.
    package let errno: Int32
    /// The resolver's message for `code` (`gai_strerror`), or a description of the problem.
    package let message: String
    /// The host name that was looked up.
    package let host: String

    /// Creates an error with an explicit message.
    package init(code: Int32, errno: Int32 = 0, message: String, host: String) {
        self.code = code
        self.errno = errno
        self.message = message
        self.host = host
    }

    /// Creates an error from a `getaddrinfo` return code.
    init(getaddrinfoCode code: Int32, errno: Int32, host: String) {
        var message = Syscall.resolverMessage(code)
        if code == EAI_SYSTEM {
            message += ": " + SystemCallError(call: "getaddrinfo", errno: errno).errnoDescription
        }
        self.init(code: code, errno: code == EAI_SYSTEM ? errno : 0, message: message, host: host)
    }

    /// True when the name does not exist (`EAI_NONAME`, or `EAI_NODATA` where defined).
    package var isNameNotFound: Bool { code == EAI_NONAME || code == -5 /* EAI_NODATA on glibc */ }

    /// The answer held no IPv4 or IPv6 stream address.
    static func noAddresses(host: String) -> ResolveError {
        ResolveError(code: 0, message: "no IPv4 or IPv6 address", host: host)
    }

    /// The host is not something `getaddrinfo` should ever see (empty, NUL byte, too long).
    static func invalidHost(_ host: String, reason: String) -> ResolveError {
        ResolveError(code: EAI_NONAME, message: "invalid host name: \(reason)", host: host)
    }

    package var description: String {
        "resolving '\(host)' failed: (\(code)) \(message)"
    }
}
