internal import CourierTLS
internal import Glibc

/// A TLS server's material: its certificates, the context that serves them, and the CA's file in a directory of
/// its own under `$TMPDIR`.
struct MockTLS: Sendable {
    let certificates: MockCertificates
    let context: TLSServerContext
    let directory: String

    var authorityPath: String { directory + "/ca.pem" }

    static func make() throws(MockServerError) -> MockTLS {
        let certificates = try MockCertificates.make()
        let context: TLSServerContext
        do {
            context = try TLSServerContext(certificatePEM: certificates.certificatePEM, privateKeyPEM: certificates.privateKeyPEM)
        } catch {
            throw MockServerError(.tlsSetup, "cannot serve the certificate: \(error)")
        }
        let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array("\(base)/courier-mock-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw MockServerError(.tlsSetup, "cannot make a directory under \(base): errno \(errno)")
        }
        let tls = MockTLS(certificates: certificates, context: context, directory: String(cString: made))
        guard write(certificates.authorityPEM, to: tls.authorityPath) else {
            tls.removeFiles()
            throw MockServerError(.tlsSetup, "cannot write \(tls.authorityPath): errno \(errno)")
        }
        return tls
    }

    /// Writes `bytes` to a new file at `path`.
    private static func write(_ bytes: [UInt8], to path: String) -> Bool {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    /// Removes the CA's file and its directory (nothing else was put there).
    func removeFiles() {
        unlink(authorityPath)
        rmdir(directory)
    }
}
