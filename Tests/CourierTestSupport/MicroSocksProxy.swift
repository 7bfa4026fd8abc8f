import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real `microsocks` SOCKS5 proxy (the distribution's; `.ci/run` installs it) on 127.0.0.1 for one test, on an
/// ephemeral port, with username/password authentication (RFC 1929) when given. SIGKILL however the test ends.
public final class MicroSocksProxy: @unchecked Sendable {
    public static let executable = ChildProcess.locate("/usr/bin/microsocks") ?? ChildProcess.locate("microsocks")

    public let port: Int
    private let process: ChildProcess

    /// Starts microsocks and waits (at most 10 s) until it accepts connections, on a thread of its own.
    public static func start(username: String? = nil, password: String? = nil) async throws -> MicroSocksProxy {
        let result = await offThePool { Result { try MicroSocksProxy(username: username, password: password) } }
        return try result.get()
    }

    private init(username: String?, password: String?) throws {
        guard let executable = Self.executable else { throw ProxyPeerError.notInstalled("microsocks") }
        var credentials: [String] = []
        if let username, let password { credentials = ["-u", username, "-P", password] }
        for _ in 0..<5 {
            let candidate = try RedisServer.freePort()
            let process = try ChildProcess(
                executable, ["-i", "127.0.0.1", "-p", String(candidate)] + credentials, stdin: .null, stdout: .null, stderr: .null
            )
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline, process.isRunning {
                if Self.accepts(port: candidate) {
                    self.port = candidate
                    self.process = process
                    return
                }
                Thread.sleep(forTimeInterval: 0.02)
            }
            process.send(SIGKILL)
            _ = process.waitBlocking()
        }
        throw ProxyPeerError.didNotStart("microsocks did not listen within 10 s")
    }

    deinit { process.send(SIGKILL) }

    /// `socks5[h]://[user:password@]127.0.0.1:PORT`.
    public func url(remoteResolution: Bool = false, username: String? = nil, password: String? = nil) -> String {
        let userinfo = username.map { "\($0):\(password ?? "")@" } ?? ""
        return "\(remoteResolution ? "socks5h" : "socks5")://\(userinfo)127.0.0.1:\(port)"
    }

    /// Whether a TCP connect to 127.0.0.1:`port` succeeds now (also how ``NginxServer`` waits for nginx).
    static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
