import Foundation

/// `Tests/Peers/tls_front.py`: TLS on 127.0.0.1 with the test PKI's `good` chain (for `localhost` and `127.0.0.1`),
/// piping each connection's plaintext to a local port: a squid behind it is an `https://` proxy. Exits when its
/// standard input closes, so it never outlives the test.
public final class TLSFront: @unchecked Sendable {
    public let port: Int
    private let process: ChildProcess

    public static func start(target: Int, filePath: String = #filePath) async throws -> TLSFront {
        let result = await offThePool { Result { try TLSFront(target: target, filePath: filePath) } }
        return try result.get()
    }

    private init(target: Int, filePath: String) throws {
        let script = URL(fileURLWithPath: filePath)
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Peers/tls_front.py")
        guard let python = ChildProcess.python else { throw ProxyPeerError.didNotStart("no python3 in PATH") }
        let pki = TestPKI.shared
        process = try ChildProcess(
            python, [script.path, "--chain", pki.chain("good"), "--key", pki.key("good"), "--target", String(target)],
            stdin: .pipe, stdout: .pipe
        )
        var transcript = ""
        let line = try PipeReader.firstLine(
            startingWith: "PORT ", in: process.standardOutput!, before: .now + .seconds(10), transcript: &transcript
        )
        guard let port = line.flatMap({ Int($0.dropFirst(5)) }) else {
            process.closeStandardInput()
            process.send(SIGTERM)
            throw ProxyPeerError.didNotStart("tls_front.py: \(transcript)")
        }
        self.port = port
    }

    deinit {
        process.closeStandardInput()
        process.send(SIGTERM)
    }
}
