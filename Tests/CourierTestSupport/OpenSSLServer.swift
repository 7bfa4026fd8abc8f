import CourierCore
import Foundation

/// `openssl s_server` on 127.0.0.1 (an ephemeral port) for the duration of a test: OpenSSL's own reference server,
/// serving its `-www` status page over TLS with a ``TestPKI`` chain. With `clientCA` it requires a client certificate
/// that chains to it (`-Verify`, `-verify_return_error`): what it refuses, it refuses with OpenSSL's alert. Stopped
/// when this object goes (or by ``stop()``).
public final class OpenSSLServer: @unchecked Sendable {
    public let port: Int
    private let process: ChildProcess

    /// Starts the server and waits (at most 10 s) until it prints its port, on a thread of its own.
    public static func start(chain: String = "good", clientCA: String?, maxVersion: String? = nil) async throws -> OpenSSLServer {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try OpenSSLServer(chain: chain, clientCA: clientCA, maxVersion: maxVersion) })
            }.start()
        }
    }

    private init(chain: String, clientCA: String?, maxVersion: String?) throws {
        guard let openssl = ChildProcess.locate("openssl") else { throw ServerError.didNotStart("no openssl in PATH") }
        let pki = TestPKI.shared
        var arguments = [
            "s_server", "-accept", "127.0.0.1:0", "-cert", pki.chain(chain), "-cert_chain", pki.chain(chain),
            "-key", pki.key(chain), "-www", "-no_dhe",
        ]
        if let clientCA { arguments += ["-Verify", "3", "-verify_return_error", "-CAfile", clientCA] }
        if maxVersion == "1.2" { arguments.append("-no_tls1_3") }
        // Its standard output carries a few lines per connection: a test makes a handful, far from a pipe's 64 KB.
        process = try ChildProcess(openssl, arguments, stdin: .pipe, stdout: .pipe)
        var transcript = ""
        let line = try PipeReader.firstLine(
            startingWith: "ACCEPT ", in: process.standardOutput!, before: .now + .seconds(10), transcript: &transcript
        )
        guard let port = line.flatMap({ $0.split(separator: ":").last }).flatMap({ Int($0) }) else {
            process.send(SIGTERM)
            throw ServerError.didNotStart(transcript)
        }
        self.port = port
    }

    /// `https://localhost:PORT/`.
    public var url: String { "https://localhost:\(port)/" }

    public func stop() {
        process.send(SIGTERM)
    }

    deinit {
        process.closeStandardInput()
        process.send(SIGTERM)
    }

    public enum ServerError: Error, CustomStringConvertible {
        case didNotStart(String)
        public var description: String {
            switch self {
            case .didNotStart(let output): return "openssl s_server did not start: \(output)"
            }
        }
    }
}
