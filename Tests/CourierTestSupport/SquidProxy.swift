import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real `squid` (the distribution's; `.ci/run` installs it) on 127.0.0.1 for one test: a generated
/// configuration in a temporary directory, an ephemeral port, optional Basic authentication (a small helper
/// script that accepts one user and password), and an access log of what it saw, one line per request:
/// `METHOD URL STATUS USER [Proxy-Authorization] [Authorization]`. SIGKILL however the test ends.
public final class SquidProxy: @unchecked Sendable {
    public static let executable = ChildProcess.locate("/usr/sbin/squid") ?? ChildProcess.locate("squid")

    public let port: Int
    public let directory: String
    private let process: ChildProcess

    /// Starts squid and waits (at most 15 s) until it accepts connections, on a thread of its own. With
    /// `username` and `password`, every request needs them (`407` otherwise).
    public static func start(username: String? = nil, password: String? = nil) async throws -> SquidProxy {
        let result = await offThePool { Result { try SquidProxy(username: username, password: password) } }
        return try result.get()
    }

    private init(username: String?, password: String?) throws {
        guard let executable = Self.executable else { throw ProxyPeerError.notInstalled("squid") }
        var template = Array((NSTemporaryDirectory() + "courier-squid-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw ProxyPeerError.didNotStart("mkdtemp failed: \(errno)") }
        directory = String(cString: made)
        // squid started as root runs as its own user (`proxy`), which must write the logs here.
        chmod(directory, 0o777)
        var access = "http_access allow all"
        if let username, let password, let python = ChildProcess.python {
            let helper = directory + "/auth.py"
            let script = """
                #!\(python)
                for line in __import__("sys").stdin:
                    print("OK" if line.rstrip("\\n") == \(pythonLiteral(username + " " + password)) else "ERR", flush=True)

                """
            try script.write(toFile: helper, atomically: true, encoding: .utf8)
            chmod(helper, 0o755)
            access = """
                auth_param basic program \(helper)
                auth_param basic realm courier-tests
                auth_param basic children 2
                acl authenticated proxy_auth REQUIRED
                http_access allow authenticated
                http_access deny all
                """
        }
        var lastFailure = ""
        for _ in 0..<5 {
            let candidate = try RedisServer.freePort()
            let configuration = """
                http_port 127.0.0.1:\(candidate)
                pid_filename \(directory)/squid.pid
                cache_log \(directory)/cache.log
                logformat courier %rm %ru %>Hs %un [%{Proxy-Authorization}>h] [%{Authorization}>h]
                access_log stdio:\(directory)/access.log courier
                cache deny all
                coredump_dir \(directory)
                visible_hostname courier-tests
                shutdown_lifetime 0 seconds
                pinger_enable off
                \(access)

                """
            let file = directory + "/squid.conf"
            try configuration.write(toFile: file, atomically: true, encoding: .utf8)
            try? FileManager.default.removeItem(atPath: directory + "/cache.log")
            let process = try ChildProcess(executable, ["-N", "-f", file], stdin: .null, stdout: .null, stderr: .null)
            let deadline = Date().addingTimeInterval(15)
            var started = false
            while Date() < deadline {
                let log = (try? String(contentsOfFile: directory + "/cache.log", encoding: .utf8)) ?? ""
                if log.contains("Accepting HTTP Socket connections") {
                    started = true
                    break
                }
                if !process.isRunning || log.contains("FATAL") {
                    lastFailure = log
                    break
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
            if started {
                self.port = candidate
                self.process = process
                return
            }
            process.send(SIGKILL)
            _ = process.waitBlocking()
        }
        try? FileManager.default.removeItem(atPath: directory)
        throw ProxyPeerError.didNotStart("squid: \(lastFailure)")
    }

    deinit {
        process.send(SIGKILL)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// `http://[user:password@]127.0.0.1:PORT`.
    public func url(username: String? = nil, password: String? = nil) -> String {
        let userinfo = username.map { "\($0):\(password ?? "")@" } ?? ""
        return "http://\(userinfo)127.0.0.1:\(port)"
    }

    /// The access log's lines so far, waiting (at most 3 s) until there are at least `count`: squid writes a
    /// line when a transaction ends (a tunnel's when it closes).
    public func accessLog(atLeast count: Int = 1) async -> [String] {
        let path = directory + "/access.log"
        for _ in 0..<150 {
            let lines = ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
            if lines.count >= count { return lines }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Kills squid (SIGKILL) and waits until it is gone: its port refuses connections afterwards.
    public func kill() async {
        process.send(SIGKILL)
        _ = await process.termination()
    }
}

/// A Python string literal of `text` (for the generated helper script).
private func pythonLiteral(_ text: String) -> String {
    "\"" + text.unicodeScalars.map { $0.isASCII && $0 != "\"" && $0 != "\\" && $0.value >= 0x20 ? String($0) : String(format: "\\u%04x", $0.value) }.joined() + "\""
}

/// Why a proxy peer could not be started.
public enum ProxyPeerError: Error, CustomStringConvertible {
    case notInstalled(String)
    case didNotStart(String)

    public var description: String {
        switch self {
        case .notInstalled(let name): return "\(name) is not installed (.ci/run installs the \(name) package)"
        case .didNotStart(let log): return "the proxy did not start: \(log)"
        }
    }
}
