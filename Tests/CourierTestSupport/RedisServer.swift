import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real `redis-server` (the distribution's; `.ci/run` installs it) on 127.0.0.1 for one test: an ephemeral
/// port, a temporary directory for its files, no persistence, and SIGKILL however the test ends (the value's
/// deinit). It can be killed and started again on the same port, and stopped and continued (SIGSTOP, SIGCONT).
public final class RedisServer: @unchecked Sendable {
    /// An ACL user (`user NAME on >PASSWORD ~* &* +@all`).
    public struct User: Sendable {
        public var name: String
        public var password: String

        public init(name: String, password: String) {
            self.name = name
            self.password = password
        }
    }

    public static let executable = ChildProcess.locate("/usr/bin/redis-server") ?? ChildProcess.locate("redis-server")

    public let port: Int
    public let directory: String
    private let arguments: [String]
    private let lock = NSLock()
    private var process: ChildProcess?

    /// Starts a server and waits (at most 10 s) until it accepts connections, on a thread of its own.
    /// With `tls`, it serves TLS only, with the test PKI's `good` chain (for `localhost` and `127.0.0.1`); with
    /// `requireClientCertificate` too, it refuses clients without a certificate of the test PKI's client CA.
    public static func start(
        password: String? = nil, user: User? = nil, tls: Bool = false, requireClientCertificate: Bool = false
    ) async throws -> RedisServer {
        let result = await offThePool {
            Result { try RedisServer(password: password, user: user, tls: tls, requireClientCertificate: requireClientCertificate) }
        }
        return try result.get()
    }

    private init(password: String?, user: User?, tls: Bool, requireClientCertificate: Bool) throws {
        guard let executable = Self.executable else { throw ServerError.notInstalled }
        var template = Array((NSTemporaryDirectory() + "courier-redis-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw ServerError.didNotStart("mkdtemp failed: \(errno)") }
        directory = String(cString: made)
        var options = ["--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", directory, "--daemonize", "no"]
        if let password { options += ["--requirepass", password] }
        if let user { options += ["--user", user.name, "on", ">" + user.password, "~*", "&*", "+@all"] }
        // redis-server needs a port number: take a free one from the kernel and hand it over; another process
        // may take it in between, so a start that cannot bind is tried again with another port.
        var lastFailure = ""
        for _ in 0..<5 {
            let candidate = try Self.freePort()
            let ports = tls
                ? ["--port", "0", "--tls-port", String(candidate), "--tls-cert-file", TestPKI.shared.chain("good"),
                   "--tls-key-file", TestPKI.shared.key("good")]
                    + (requireClientCertificate
                        ? ["--tls-auth-clients", "yes", "--tls-ca-cert-file", TestPKI.shared.clientRootCA]
                        : ["--tls-auth-clients", "no"])
                : ["--port", String(candidate)]
            let arguments = ports + options
            if let process = try Self.launch(executable, arguments, directory: directory, failure: &lastFailure) {
                self.port = candidate
                self.arguments = arguments
                self.process = process
                return
            }
        }
        try? FileManager.default.removeItem(atPath: directory)
        throw ServerError.didNotStart(lastFailure)
    }

    deinit {
        process?.send(SIGKILL)
        process?.send(SIGCONT)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// `redis://[user:password@]127.0.0.1:PORT[/db]` (`rediss://` for a TLS server).
    public func url(user: String? = nil, password: String? = nil, database: Int = 0, tls: Bool = false) -> String {
        let userinfo = password.map { "\(user ?? ""):\($0)@" } ?? ""
        return "\(tls ? "rediss" : "redis")://\(userinfo)127.0.0.1:\(port)\(database == 0 ? "" : "/\(database)")"
    }

    /// Kills the server (SIGKILL) and waits until it is gone.
    public func kill() async {
        guard let process = lock.withLock({ self.process }) else { return }
        process.send(SIGKILL)
        process.send(SIGCONT)
        _ = await process.termination()
        lock.withLock { self.process = nil }
    }

    /// Starts the server again on the same port (after ``kill()``), waiting until it accepts connections.
    public func restart() async throws {
        let result = await offThePool { [self] in
            Result { () throws -> ChildProcess? in
                var failure = ""
                for _ in 0..<20 {
                    if let process = try Self.launch(Self.executable!, arguments, directory: directory, failure: &failure) { return process }
                    Thread.sleep(forTimeInterval: 0.1)
                }
                throw ServerError.didNotStart(failure)
            }
        }
        let process = try result.get()
        lock.withLock { self.process = process }
    }

    /// SIGSTOP: the server keeps its sockets but answers nothing (connects still complete in the kernel).
    public func pause() { lock.withLock { process }?.send(SIGSTOP) }

    /// SIGCONT.
    public func resume() { lock.withLock { process }?.send(SIGCONT) }

    /// Starts redis-server and waits until its log says it is ready; nil when it could not bind its port.
    private static func launch(_ executable: String, _ arguments: [String], directory: String, failure: inout String) throws -> ChildProcess? {
        let log = directory + "/redis.log"
        try? FileManager.default.removeItem(atPath: log)
        let process = try ChildProcess(executable, arguments + ["--logfile", log], stdin: .null, stdout: .null, stderr: .null)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if text.contains("Ready to accept connections") { return process }
            if !process.isRunning || text.contains("Address already in use") || text.contains("Could not create server TCP") {
                failure = text
                process.send(SIGKILL)
                return nil
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        process.send(SIGKILL)
        throw ServerError.didNotStart("not ready within 10 s")
    }

    /// A port the kernel considers free now: bind a socket to port 0 on 127.0.0.1, read the port, close it (the
    /// proxies' helpers use it too).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ServerError.didNotStart("socket failed: \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw ServerError.didNotStart("bind failed: \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    public enum ServerError: Error, CustomStringConvertible {
        case notInstalled
        case didNotStart(String)

        public var description: String {
            switch self {
            case .notInstalled: return "redis-server is not installed (.ci/run installs the redis-server package)"
            case .didNotStart(let log): return "redis-server did not start: \(log)"
            }
        }
    }
}
