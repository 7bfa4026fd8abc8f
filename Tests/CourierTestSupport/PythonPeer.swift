import Foundation

/// Runs `Tests/Peers/http_peer.py` (Python's own `http.server`, an HTTP/1.1 implementation independent of
/// Courier's) on loopback for the duration of a test. The peer exits when its standard input closes, so it
/// never outlives the test process.
public final class PythonPeer: @unchecked Sendable {
    public let port: Int
    public let host: String
    /// `https` when the peer serves TLS.
    public let scheme: String
    private let process: Process
    private let stdin: Pipe

    /// Starts the peer and waits (at most 10 s) until it prints its port, on a thread of its own so that a
    /// slow start never blocks Swift concurrency's small cooperative pool (other tests' timers run there).
    public static func start(ipv6: Bool = false, tls: TLSPeerOptions? = nil, filePath: String = #filePath) async throws -> PythonPeer {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try PythonPeer(ipv6: ipv6, tls: tls, filePath: filePath) })
            }.start()
        }
    }

    /// Starts the peer, blocking the calling thread until it listens. Prefer ``start(ipv6:filePath:)``.
    public init(ipv6: Bool = false, tls: TLSPeerOptions? = nil, filePath: String = #filePath) throws {
        let script = URL(fileURLWithPath: filePath)
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Peers/http_peer.py")
        let python = FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") ? "/usr/bin/python3" : "python3"
        process = Process()
        process.executableURL = URL(fileURLWithPath: python.hasPrefix("/") ? python : "/usr/bin/env")
        process.arguments = (python.hasPrefix("/") ? [] : [python]) + [script.path] + (ipv6 ? ["--ipv6"] : [])
            + (tls?.arguments ?? [])
        stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        host = ipv6 ? "::1" : "127.0.0.1"
        scheme = tls == nil ? "http" : "https"
        // Read the "PORT n" line without blocking forever.
        let handle = stdout.fileHandleForReading
        let deadline = Date().addingTimeInterval(10)
        var buffer = Data()
        var found: Int?
        while found == nil && Date() < deadline {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            buffer.append(chunk)
            if let line = String(data: buffer, encoding: .utf8)?.split(separator: "\n").first, line.hasPrefix("PORT ") {
                found = Int(line.dropFirst(5))
            }
        }
        guard let port = found else {
            process.terminate()
            throw PeerError.didNotStart(String(data: buffer, encoding: .utf8) ?? "")
        }
        self.port = port
    }

    /// `http://127.0.0.1:PORT` + path (`https` for a TLS peer).
    public func url(_ path: String) -> String {
        "\(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(port)\(path)"
    }

    /// The same URL with `localhost` as the host.
    public func localhostURL(_ path: String) -> String { "\(scheme)://localhost:\(port)\(path)" }

    /// Asks the peer to exit (it reads EOF on its standard input); does not wait.
    public func stop() {
        try? stdin.fileHandleForWriting.close()
    }

    deinit {
        if process.isRunning {
            try? stdin.fileHandleForWriting.close()
            process.terminate()
        }
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
