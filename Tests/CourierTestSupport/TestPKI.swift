import Foundation

/// A throw-away PKI made once per test process by `Tests/Peers/make_pki.py` (Python's `cryptography`): a root
/// and an intermediate CA, a good chain for `localhost`, `127.0.0.1` and `::1`, bad chains of every kind the
/// TLS tests need, and the pins of the keys, computed independently of Courier.
public final class TestPKI: Sendable {
    /// The folder holding the files.
    public let directory: String
    /// Pins computed by the script: `root`, `intermediate`, `good`, `backup`, `untrusted`.
    public let pins: [String: String]

    public static let shared: TestPKI = {
        do {
            return try TestPKI()
        } catch {
            fatalError("could not make the test PKI: \(error)")
        }
    }()

    private init(filePath: String = #filePath) throws {
        let script = URL(fileURLWithPath: filePath)
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Peers/make_pki.py")
        directory = NSTemporaryDirectory() + "courier-pki-\(getpid())-\(UUID().uuidString.prefix(8))"
        guard let python = ChildProcess.python else { throw PKIError.scriptFailed("no python3 in PATH") }
        let process = try ChildProcess(python, [script.path, directory], stdout: .pipe, stderr: .inherit)
        let text = try PipeReader.readToEnd(process.standardOutput!)
        guard process.waitBlocking() == .exited(0) else { throw PKIError.scriptFailed(text) }
        let data = try Data(contentsOf: URL(fileURLWithPath: directory + "/pins.json"))
        pins = try JSONDecoder().decode([String: String].self, from: data)
    }

    /// The trusted root, as a CA bundle.
    public var rootCA: String { directory + "/root.pem" }
    /// A root that signed the `untrusted` chain.
    public var untrustedRootCA: String { directory + "/untrusted-root.pem" }
    public func chain(_ name: String) -> String { directory + "/\(name)-chain.pem" }
    /// The CA client certificates (`client`, `client2`, `client-expired`) chain to; `client-otherca`'s is another.
    public var clientRootCA: String { directory + "/client-root.pem" }
    /// `client`'s key, encrypted with ``clientKeyPassword``.
    public var encryptedClientKey: String { directory + "/client-encrypted.key" }
    public var clientKeyPassword: String { "correct horse battery staple" }
    public func key(_ name: String) -> String { directory + "/\(name).key" }

    public enum PKIError: Error, CustomStringConvertible {
        case scriptFailed(String)
        public var description: String {
            switch self {
            case .scriptFailed(let output): return "make_pki.py failed: \(output)"
            }
        }
    }
}
