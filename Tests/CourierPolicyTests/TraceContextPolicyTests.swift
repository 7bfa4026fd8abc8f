import CourierCore
import CourierPolicy
import Testing

/// `propagate-trace-context`: on for services unless the policy says otherwise, never for unclaimed hosts, and a
/// bad value is an error where it is written.
@Suite struct TraceContextPolicyTests {
    private func route(_ yaml: String, _ url: String) throws -> Route {
        let result = compile(yaml)
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        let graph = try #require(result.graph)
        return try #require(graph.route(for: url))
    }

    @Test func servicesPropagateByDefaultAndUnclaimedHostsNever() throws {
        let yaml = """
            version: 1
            defaults:
              propagate-trace-context: true
            services:
              api: { hosts: [api.example.com] }
            """
        #expect(try route(yaml, "https://api.example.com/v1").propagatesTraceContext)
        // Even with `defaults:` saying true: a host no service claims is unknown to the policy.
        #expect(try !route(yaml, "https://elsewhere.example.org/").propagatesTraceContext)
    }

    @Test func defaultsSetWhatServicesStartFromAndAServiceOverrides() throws {
        let yaml = """
            version: 1
            defaults:
              propagate-trace-context: false
            services:
              quiet: { hosts: [quiet.example.com] }
              loud: { hosts: [loud.example.com], propagate-trace-context: true }
            """
        #expect(try !route(yaml, "https://quiet.example.com/").propagatesTraceContext)
        #expect(try route(yaml, "https://loud.example.com/").propagatesTraceContext)
        let graph = try #require(compile(yaml).graph)
        #expect(graph.defaults.propagatesTraceContext == false)
        #expect(graph.services.first { $0.name == "loud" }?.origins["propagate-trace-context"]?.line == 6)
    }

    @Test func aValueThatIsNotABooleanIsAnErrorAtItsPosition() {
        let result = compile("""
            version: 1
            services:
              api:
                hosts: [api.example.com]
                propagate-trace-context: sometimes
            """)
        let errors = result.rules("wrong-type")
        #expect(errors.count == 1)
        #expect(errors.first?.location.line == 5)
        #expect(errors.first?.location.column == 30)
        #expect(errors.first?.message.contains("propagate-trace-context") == true)
    }

    @Test func aMisspeltKeyGetsASuggestion() {
        let result = compile("""
            version: 1
            services:
              api:
                hosts: [api.example.com]
                propagate-trace-contexts: false
            """)
        let unknown = result.rules("unknown-key")
        #expect(unknown.count == 1)
        #expect(unknown.first?.suggestion?.contains("propagate-trace-context") == true)
    }
}
