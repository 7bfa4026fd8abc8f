import Foundation

/// Runs `Tests/Peers/http_peer.py` (Python's own `http.server`, an HTTP/1.1 implementation independent of
/// Courier's) on loopback for the duration of a test. The peer exits when its standard input closes, so it
/// never outlives the test process.
public final class PythonPeer: @unchecked Sendable {
    public let port: Int
    public let host: String
    /// `https` when the peer serves TLS.
    public let scheme: String
    private let process: ChildProcess

    /// Starts the peer and waits (at most 10 s) until it prints its port, on a thread of its own so that a
    /// slow start never blocks Swift concurrency's small cooperative pool (other tests' timers run there).
    public static func start(ipv6: Bool = false, tls: TLSPeerOptions? = nil, filePath: String = #filePath) async throws -> PythonPeer {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try PythonPeer(ipv6: ipv6, tls: tls, filePath: filePath) })
            }.start()
        }
    }

    /// Starts the peer on a Unix domain socket at `unixSocket` (``port`` is 0), serving HTTPS with `tls`.
    public static func start(unixSocket: String, tls: TLSPeerOptions? = nil, filePath: String = #filePath) async throws -> PythonPeer {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try PythonPeer(extraArguments: ["--unix", unixSocket], tls: tls, filePath: filePath) })
            }.start()
        }
    }

    /// Starts the peer, blocking the calling thread until it listens. Prefer ``start(ipv6:filePath:)``.
    public convenience init(ipv6: Bool = false, tls: TLSPeerOptions? = nil, filePath: String = #filePath) throws {
        try self.init(extraArguments: ipv6 ? ["--ipv6"] : [], tls: tls, filePath: filePath)
    }

    private init(extraArguments: [String], tls: TLSPeerOptions?, filePath: String) throws {
        let ipv6 = extraArguments.contains("--ipv6")
        let script = URL(fileURLWithPath: filePath)
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Peers/http_peer.py")
        guard let python = ChildProcess.python else { throw PeerError.didNotStart("no python3 in PATH") }
        process = try ChildProcess(
            python, [script.path] + extraArguments + (tls?.arguments ?? []), stdin: .pipe, stdout: .pipe
        )
        host = ipv6 ? "::1" : "127.0.0.1"
        scheme = tls == nil ? "http" : "https"
        // Read the "PORT n" line without blocking forever.
        port = try process.printedPort { PeerError.didNotStart($0) }
    }

    /// `http://127.0.0.1:PORT` + path (`https` for a TLS peer).
    public func url(_ path: String) -> String {
        "\(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(port)\(path)"
    }

    /// The same URL with `localhost` as the host.
    public func localhostURL(_ path: String) -> String { "\(scheme)://localhost:\(port)\(path)" }

    /// Asks the peer to exit (it reads EOF on its standard input); does not wait.
    public func stop() {
        process.closeStandardInput()
    }

    deinit {
        process.closeStandardInput()
        process.send(SIGTERM)
    }

    public enum PeerError: Error, CustomStringConvertible {
        case didNotStart(String)
        public var description: String {
            switch self {
            case .didNotStart(let output): return "the Python HTTP peer did not start: \(output)"
            }
        }
    }
}
