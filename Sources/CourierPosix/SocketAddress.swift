internal import CCourierPosix
internal import Glibc

/// An IPv4 or IPv6 address with a port, or a Unix domain socket's path: what `connect`, `bind` and
/// `getaddrinfo` deal in.
///
/// Its description is `127.0.0.1:80`, `[::1]:80` or `unix:/run/docker.sock`.
package struct SocketAddress: Hashable, Sendable, CustomStringConvertible {
    /// The address family.
    package enum Family: Hashable, Sendable {
        case ipv4
        case ipv6
        /// A Unix domain socket (`AF_UNIX`), named by a path in the file system.
        case unix
    }

    private enum Storage: Hashable {
        /// Address in network byte order.
        case v4(address: UInt32, port: UInt16)
        /// Address bytes (network order, as two words) and the scope id for link-local addresses.
        case v6(high: UInt64, low: UInt64, port: UInt16, scopeID: UInt32)
        /// A socket path (at most 107 bytes, no NUL: what `sockaddr_un` holds).
        case unix(path: String)
    }

    /// The longest path a `sockaddr_un` holds, its terminating NUL excluded.
    package static let maxUnixPathLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// A Unix domain socket's address; nil for an empty path, one with a NUL byte, or one longer than
    /// ``maxUnixPathLength`` bytes.
    package init?(unixPath path: String) {
        guard !path.isEmpty, !path.utf8.contains(0), path.utf8.count <= Self.maxUnixPathLength else { return nil }
        storage = .unix(path: path)
    }

    private var storage: Storage

    /// Parses an IP literal (`127.0.0.1`, `::1`, `[::1]`); nil for anything else or a port outside 0...65535.
    package init?(ipAddress: String, port: Int) {
        guard (0...65535).contains(port), !ipAddress.utf8.contains(0) else { return nil }
        var text = Substring(ipAddress)
        if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        if let v4 = Syscall.parseIPv4(String(text)) {
            storage = .v4(address: v4.s_addr, port: UInt16(port))
        } else if let v6 = Syscall.parseIPv6(String(text)) {
            let (high, low) = withUnsafeBytes(of: v6) { ($0.load(as: UInt64.self), $0.load(fromByteOffset: 8, as: UInt64.self)) }
            storage = .v6(high: high, low: low, port: UInt16(port), scopeID: 0)
        } else {
            return nil
        }
    }

    /// Reads a `sockaddr` of family `AF_INET` or `AF_INET6`; nil for other families.
    init?(sockaddr pointer: UnsafePointer<sockaddr>) {
        switch Int32(pointer.pointee.sa_family) {
        case AF_INET:
            let v4 = UnsafeRawPointer(pointer).loadUnaligned(as: sockaddr_in.self)
            storage = .v4(address: v4.sin_addr.s_addr, port: UInt16(bigEndian: v4.sin_port))
        case AF_INET6:
            let v6 = UnsafeRawPointer(pointer).loadUnaligned(as: sockaddr_in6.self)
            let (high, low) = withUnsafeBytes(of: v6.sin6_addr) {
                ($0.load(as: UInt64.self), $0.load(fromByteOffset: 8, as: UInt64.self))
            }
            storage = .v6(high: high, low: low, port: UInt16(bigEndian: v6.sin6_port), scopeID: v6.sin6_scope_id)
        case AF_UNIX:
            // An unnamed socket (a client's own end) has an empty path.
            var raw = UnsafeRawPointer(pointer).loadUnaligned(as: sockaddr_un.self)
            let path = withUnsafeBytes(of: &raw.sun_path) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            storage = .unix(path: path)
        default:
            return nil
        }
    }

    /// Reads a `sockaddr_storage` filled in by `getsockname`/`getpeername`.
    init?(storage: sockaddr_storage) {
        var storage = storage
        let parsed = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress(sockaddr: $0) }
        }
        guard let parsed else { return nil }
        self = parsed
    }

    /// IPv4 or IPv6.
    package var family: Family {
        switch storage {
        case .v4: .ipv4
        case .v6: .ipv6
        case .unix: .unix
        }
    }

    /// The port number (0 for a Unix domain socket).
    package var port: Int {
        switch storage {
        case .v4(_, let port), .v6(_, _, let port, _): Int(port)
        case .unix: 0
        }
    }

    /// The socket path of a Unix domain socket's address; nil for an IP address.
    package var unixPath: String? {
        if case .unix(let path) = storage { return path }
        return nil
    }

    /// The same address with another port.
    package func withPort(_ port: Int) -> SocketAddress {
        precondition((0...65535).contains(port), "port \(port) out of range")
        var copy = self
        switch storage {
        case .v4(let address, _): copy.storage = .v4(address: address, port: UInt16(port))
        case .v6(let high, let low, _, let scope): copy.storage = .v6(high: high, low: low, port: UInt16(port), scopeID: scope)
        case .unix: break
        }
        return copy
    }

    /// The address without the port, e.g. `127.0.0.1` or `::1` (a Unix domain socket's path).
    package var ipAddress: String {
        switch storage {
        case .v4(let address, _):
            var raw = in_addr(s_addr: address)
            return Syscall.formatAddress(family: AF_INET, &raw)
        case .v6(let high, let low, _, _):
            var raw = in6_addr()
            withUnsafeMutableBytes(of: &raw) {
                $0.storeBytes(of: high, as: UInt64.self)
                $0.storeBytes(of: low, toByteOffset: 8, as: UInt64.self)
            }
            return Syscall.formatAddress(family: AF_INET6, &raw)
        case .unix(let path):
            return path
        }
    }

    /// `AF_INET`, `AF_INET6` or `AF_UNIX`.
    var domain: Int32 {
        switch storage {
        case .v4: AF_INET
        case .v6: AF_INET6
        case .unix: AF_UNIX
        }
    }

    /// Runs `body` with a `sockaddr` for this address and its length.
    func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws -> R) rethrows -> R {
        switch storage {
        case .v4(let address, let port):
            var raw = sockaddr_in()
            raw.sin_family = sa_family_t(AF_INET)
            raw.sin_port = port.bigEndian
            raw.sin_addr = in_addr(s_addr: address)
            return try withUnsafePointer(to: &raw) {
                try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    try body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        case .v6(let high, let low, let port, let scope):
            var raw = sockaddr_in6()
            raw.sin6_family = sa_family_t(AF_INET6)
            raw.sin6_port = port.bigEndian
            raw.sin6_scope_id = scope
            withUnsafeMutableBytes(of: &raw.sin6_addr) {
                $0.storeBytes(of: high, as: UInt64.self)
                $0.storeBytes(of: low, toByteOffset: 8, as: UInt64.self)
            }
            return try withUnsafePointer(to: &raw) {
                try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    try body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        case .unix(let path):
            var raw = sockaddr_un()
            raw.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &raw.sun_path) { buffer in
                // The initialiser checked the length: the path and its NUL fit.
                for (index, byte) in path.utf8.enumerated() { buffer[index] = byte }
                buffer[path.utf8.count] = 0
            }
            let length = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)! + path.utf8.count + 1
            return try withUnsafePointer(to: &raw) {
                try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { try body($0, socklen_t(length)) }
            }
        }
    }

    package var description: String {
        switch storage {
        case .v4: "\(ipAddress):\(port)"
        case .v6: "[\(ipAddress)]:\(port)"
        case .unix(let path): "unix:\(path)"
        }
    }
}
