import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real `nginx` (the distribution's; `.ci/run` installs it) on 127.0.0.1 for one test, serving the files of
/// ``root`` with its own byte-range support (`Range`, `If-Range`, `206`, strong `ETag`s): a generated configuration
/// in a temporary directory, an ephemeral port, no gzip. SIGKILL however the test ends.
public final class NginxServer: @unchecked Sendable {
    public static let executable = ChildProcess.locate("/usr/sbin/nginx") ?? ChildProcess.locate("nginx")

    public let port: Int
    /// The temporary directory; the served files are under `root`.
    public let directory: String
    public var root: String { directory + "/www" }
    private let process: ChildProcess

    /// Starts nginx and waits (at most 15 s) until it accepts connections, on a thread of its own.
    public static func start() async throws -> NginxServer {
        let result = await offThePool { Result { try NginxServer() } }
        return try result.get()
    }

    private init() throws {
        guard let executable = Self.executable else { throw ProxyPeerError.notInstalled("nginx") }
        var template = Array((NSTemporaryDirectory() + "courier-nginx-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw ProxyPeerError.didNotStart("mkdtemp failed: \(errno)") }
        directory = String(cString: made)
        // nginx's workers may run as nobody and must read the files.
        chmod(directory, 0o755)
        try FileManager.default.createDirectory(atPath: directory + "/www", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: directory + "/tmp", withIntermediateDirectories: true)
        chmod(directory + "/www", 0o755)
        var lastFailure = ""
        for _ in 0..<5 {
            let candidate = try RedisServer.freePort()
            let configuration = """
                worker_processes 1;
                daemon off;
                pid \(directory)/nginx.pid;
                error_log \(directory)/error.log;
                events { worker_connections 256; }
                http {
                    access_log \(directory)/access.log;
                    client_body_temp_path \(directory)/tmp;
                    proxy_temp_path \(directory)/tmp;
                    fastcgi_temp_path \(directory)/tmp;
                    uwsgi_temp_path \(directory)/tmp;
                    scgi_temp_path \(directory)/tmp;
                    server {
                        listen 127.0.0.1:\(candidate);
                        root \(directory)/www;
                        location / { default_type application/octet-stream; }
                    }
                }

                """
            let file = directory + "/nginx.conf"
            try configuration.write(toFile: file, atomically: true, encoding: .utf8)
            let process = try ChildProcess(executable, ["-c", file, "-p", directory], stdin: .null, stdout: .null, stderr: .null)
            let deadline = Date().addingTimeInterval(15)
            while Date() < deadline, process.isRunning {
                if MicroSocksProxy.accepts(port: candidate) {
                    self.port = candidate
                    self.process = process
                    return
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
            lastFailure = (try? String(contentsOfFile: directory + "/error.log", encoding: .utf8)) ?? ""
            process.send(SIGKILL)
            _ = process.waitBlocking()
        }
        try? FileManager.default.removeItem(atPath: directory)
        throw ProxyPeerError.didNotStart("nginx: \(lastFailure)")
    }

    deinit {
        process.send(SIGKILL)
        _ = process.waitBlocking()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Writes `bytes` to `root/name` (readable by nginx's workers).
    public func serve(_ name: String, _ bytes: [UInt8]) throws {
        let path = root + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o644)
    }

    /// `http://127.0.0.1:PORT/path`.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }
}
