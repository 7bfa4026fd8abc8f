import CourierCore
import Testing

@Suite struct SecretResolverTests {
    struct NoSuchFile: Error {}

    private let resolver = SecretResolver(environment: ["TOKEN": "t0k", "EMPTY": ""]) { path in
        switch path {
        case "/secrets/lf": return Array("line\n".utf8)
        case "/secrets/crlf": return Array("line\r\n".utf8)
        case "/secrets/two": return Array("line\n\n".utf8)
        case "/secrets/binary": return [0xff, 0xfe]
        default: throw NoSuchFile()
        }
    }

    @Test func substitutesEnvironmentAndFiles() throws {
        let s = PolicyString(segments: [
            .literal("Bearer "), .secret(SecretReference(source: .env, name: "TOKEN")), .literal("/"),
            .secret(SecretReference(source: .file, name: "/secrets/lf")),
        ])
        #expect(try resolver.resolve(s) == "Bearer t0k/line")
        #expect(try resolver.resolve(SecretReference(source: .file, name: "/secrets/crlf")) == "line")
        // Only one trailing newline is removed.
        #expect(try resolver.resolve(SecretReference(source: .file, name: "/secrets/two")) == "line\n")
        // A variable set to the empty string is set.
        #expect(try resolver.resolve(SecretReference(source: .env, name: "EMPTY")) == "")
    }

    @Test func missingSecretsAreErrorsNamingThem() {
        do {
            _ = try resolver.resolve(SecretReference(source: .env, name: "NOPE"))
            Issue.record("expected an error")
        } catch {
            #expect(error.kind == .missingSecret)
            #expect(error.description.contains("'NOPE'"))
        }
        do {
            _ = try resolver.resolve(SecretReference(source: .file, name: "/secrets/absent"))
            Issue.record("expected an error")
        } catch {
            #expect(error.kind == .missingSecret)
            #expect(error.description.contains("/secrets/absent"))
            #expect(error.cause is NoSuchFile)
        }
        #expect(throws: AuthoriserError.self) { try resolver.resolve(SecretReference(source: .file, name: "/secrets/binary")) }
    }
}
