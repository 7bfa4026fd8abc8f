/// Resolves secret references: `${env:NAME}` from an environment dictionary, `${file:path}` from a file whose
/// one trailing newline (`\n` or `\r\n`) is removed.
///
/// A missing variable or file is an ``AuthoriserError`` naming it, never an empty credential. Reading files is
/// injected (CourierCore does no I/O); `CourierAuthorisers` provides one that reads from disk.
public struct SecretResolver: Sendable {
    /// Variables for `${env:…}`.
    public var environment: [String: String]
    /// Returns a file's bytes, or throws when it cannot be read.
    public var readFile: @Sendable (_ path: String) throws -> [UInt8]

    public init(environment: [String: String], readFile: @escaping @Sendable (_ path: String) throws -> [UInt8]) {
        self.environment = environment
        self.readFile = readFile
    }

    /// The value of one reference.
    public func resolve(_ reference: SecretReference) throws(AuthoriserError) -> String {
        switch reference.source {
        case .env:
            guard let value = environment[reference.name] else {
                throw AuthoriserError(.missingSecret, "environment variable '\(reference.name)' is not set")
            }
            return value
        case .file:
            let bytes: [UInt8]
            do {
                bytes = try readFile(reference.name)
            } catch {
                throw AuthoriserError(.missingSecret, "secret file '\(reference.name)' cannot be read", cause: error)
            }
            var end = bytes.count
            if end > 0 && bytes[end - 1] == UInt8(ascii: "\n") {
                end -= 1
                if end > 0 && bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            }
            guard let text = String(validating: bytes[..<end], as: UTF8.self) else {
                throw AuthoriserError(.missingSecret, "secret file '\(reference.name)' is not UTF-8 text")
            }
            return text
        }
    }

    /// `string` with every reference substituted.
    public func resolve(_ string: PolicyString) throws(AuthoriserError) -> String {
        try string.resolve { (reference) throws(AuthoriserError) in try resolve(reference) }
    }
}
