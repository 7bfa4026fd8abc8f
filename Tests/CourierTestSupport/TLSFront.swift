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
        port = try process.printedPort { ProxyPeerError.didNotStart("tls_front.py: \($0)") }
    }

    deinit {
        process.closeStandardInput()
        process.send(SIGTERM)
    }
}
