import CourierCore
import CourierLint
import CourierPolicy
import Testing

/// `courier explain` shows a service's client identity (the files, the password's reference, never a literal
/// password) and its Unix socket, each with the line that set it; a service without them shows no such rows.
@Suite struct ClientIdentityExplanationTests {
    static let yaml = """
        version: 1
        defaults:
          tls: { client-certificate: ../../CourierPolicyTests/Fixtures/certs/ca.pem }
        services:
          partner:
            hosts: [api.partner.example]
            tls:
              client-key-password: "${env:PARTNER_PW}"
          literal:
            hosts: [literal.example]
            tls: { client-key-password: hunter2 }
          docker:
            hosts: [docker]
            scheme: http
            connect-to: unix:/run/docker.sock
        """

    func explain(_ url: String) throws -> RouteExplanation {
        let compilation = PolicyCompiler().compile(source: Self.yaml, path: Fixtures.path("inline.yaml"))
        #expect(compilation.diagnostics.map(\.rule) == ["secret-literal"])
        let graph = try #require(compilation.graph)
        return RouteExplanation(graph: graph, url: try #require(HTTPURL(url)), method: .get)
    }

    @Test func theIdentityIsShownWithItsOriginsAndThePasswordAsItsReference() throws {
        let e = try explain("https://api.partner.example/v1")
        let certificate = try #require(e.value("tls.client-certificate"))
        #expect(certificate.value.hasSuffix("/CourierPolicyTests/Fixtures/certs/ca.pem"))
        #expect(certificate.origin.description.hasSuffix("inline.yaml:3"))
        // No client-key: the key is read from the certificate's file.
        #expect(e.value("tls.client-key")?.value == certificate.value)
        #expect(e.value("tls.client-key-password")?.value == "${env:PARTNER_PW}")
        #expect(e.value("tls.client-key-password")?.origin.description.hasSuffix("inline.yaml:8") == true)
        #expect(e.value("connect-to") == nil)
    }

    @Test func aLiteralPasswordIsRedacted() throws {
        let e = try explain("https://literal.example/")
        #expect(e.value("tls.client-key-password")?.value == "<redacted>")
    }

    @Test func theUnixSocketIsShown() throws {
        let e = try explain("http://docker/v1.43/info")
        #expect(e.value("connect-to")?.value == "unix:/run/docker.sock")
        #expect(e.value("connect-to")?.origin.description.hasSuffix("inline.yaml:15") == true)
    }
}
