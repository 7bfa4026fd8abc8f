internal import CCourierPosix
internal import Glibc

/// An IPv4 or IPv6 address with a port: what `connect`, `bind` and `getaddrinfo` deal in.
///
/// Its description is `127.0.0.1:80` or `[::1]:80`.
package struct SocketAddress: Hashable, Sendable, CustomStringConvertible {
    /// The address family.
    package enum Family: Hashable, Sendable {
        case ipv4
        case ipv6
    }

    private enum Storage: Hashable {
        /// Address in network byte order.
        case v4(address: UInt32, port: UInt16)
        /// Address bytes (network order, as two words) and the scope id for link-local addresses.
        case v6(high: UInt64, low: UInt64, port: UInt16, scopeID: UInt32)
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
        if case .v4 = storage { return .ipv4 }
        return .ipv6
    }

    /// The port number.
    package var port: Int {
        switch storage {
        case .v4(_, let port), .v6(_, _, let port, _): Int(port)
        }
    }

    /// The same address with another port.
    package func withPort(_ port: Int) -> SocketAddress {
        precondition((0...65535).contains(port), "port \(port) out of range")
        var copy = self
        switch storage {
        case .v4(let address, _): copy.storage = .v4(address: address, port: UInt16(port))
        case .v6(let high, let low, _, let scope): copy.storage = .v6(high: high, low: low, port: UInt16(port), scopeID: scope)
        }
        return copy
    }

    /// The address without the port, e.g. `127.0.0.1` or `::1`.
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
        }
    }

    /// `AF_INET` or `AF_INET6`.
    var domain: Int32 { family == .ipv4 ? AF_INET : AF_INET6 }

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
        }
    }

    package var description: String {
        family == .ipv4 ? "\(ipAddress):\(port)" : "[\(ipAddress)]:\(port)"
    }
}
