import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `Tests/Peers/cutting_proxy.py` for one test: a TCP proxy on 127.0.0.1 in front of `upstream` that cuts every
/// response (every connection's bytes back to the client) at an offset drawn from SplitMix64(`seed`), uniformly in
/// `cutBetween`, heads included, ending the connection with a reset, a close, or (one in `stallEvery`) a stall the
/// client's idle timeout must end. Only the first `cuts` connections are cut (nil: all). It exits when the test ends.
public final class CuttingProxy: @unchecked Sendable {
    public let port: Int
    public let seed: UInt64
    private let process: ChildProcess
    private let log: String

    /// One line of the proxy's log: one connection.
    public struct Connection: Sendable, Equatable {
        public var index: Int
        public var cut: Int
        /// `reset`, `close`, `stall` or `none` (not cut).
        public var how: String
        /// The bytes sent back to the client (the response's head and body, up to the cut).
        public var forwarded: Int
    }

    public static func start(
        upstream: Int, seed: UInt64, cutBetween range: ClosedRange<Int>, stallEvery: Int = 0, cuts: Int? = nil,
        filePath: String = #filePath
    ) async throws -> CuttingProxy {
        let result = await offThePool {
            Result { try CuttingProxy(upstream: upstream, seed: seed, range: range, stallEvery: stallEvery, cuts: cuts, filePath: filePath) }
        }
        return try result.get()
    }

    private init(upstream: Int, seed: UInt64, range: ClosedRange<Int>, stallEvery: Int, cuts: Int?, filePath: String) throws {
        let script = URL(fileURLWithPath: filePath)
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Peers/cutting_proxy.py")
        guard let python = ChildProcess.python else { throw ProxyPeerError.notInstalled("python3") }
        self.seed = seed
        log = NSTemporaryDirectory() + "courier-cutting-\(UUID().uuidString).log"
        process = try ChildProcess(
            python,
            [
                script.path, "--upstream", String(upstream), "--seed", String(seed), "--min", String(range.lowerBound),
                "--max", String(range.upperBound), "--stall-every", String(stallEvery), "--cuts", String(cuts ?? -1), "--log", log,
            ],
            stdin: .pipe, stdout: .pipe
        )
        port = try process.printedPort { ProxyPeerError.didNotStart("cutting proxy: \($0)") }
    }

    deinit {
        process.closeStandardInput()
        process.send(SIGTERM)
        try? FileManager.default.removeItem(atPath: log)
    }

    /// `http://127.0.0.1:PORT/path`.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// The connections that have ended so far, waiting (at most 3 s) until there are at least `count`.
    public func connections(atLeast count: Int = 0) async -> [Connection] {
        for _ in 0..<150 {
            let lines = read()
            if lines.count >= count { return lines }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return read()
    }

    private func read() -> [Connection] {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ").map(String.init)
            guard words.count == 8, let index = Int(words[1]), let cut = Int(words[3]), let forwarded = Int(words[7]) else { return nil }
            return Connection(index: index, cut: cut, how: words[5], forwarded: forwarded)
        }
    }
}
