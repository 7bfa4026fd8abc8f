import CourierCore
import CourierPolicy
import CourierTestSupport
import Testing

/// A generated 10,000-service policy compiles quickly and routes correctly (the Benchmarks/ package measures
/// the release-build figures; this keeps an eye on accidental quadratic work).
@Suite(.serialized) struct ScaleTests {
    static func generatedPolicy(services: Int, rich: Bool = true) -> String {
        var yaml = """
        version: 1
        defaults:
          timeouts: { connect: 5s, idle: 30s, total: 60s }
          retry: { max-attempts: 3, backoff: { initial: 500ms, max: 10s } }
          rate-limit: { requests-per-second: 10 }
        authorisers:
          token: { plugin: static-bearer, settings: { token: "${env:TOKEN}" } }
        services:

        """
        yaml.reserveCapacity(services * 200)
        for i in 0..<services where !rich {
            yaml += """
              svc-\(i):
                hosts: [api\(i).example.com, "*.api\(i).example.com"]
                rate-limit: { requests-per-second: \(i % 50 + 1) }
                retry: { max-attempts: \(i % 3 + 1) }

            """
        }
        for i in 0..<services where rich {
            yaml += """
              svc-\(i):
                hosts: [api\(i).example.com, "*.api\(i).example.com"]
                authoriser: token
                rate-limit: { requests-per-second: \(i % 50 + 1), endpoints: { /v1/search: { requests-per-second: 2 } } }
                retry: { max-attempts: \(i % 3 + 1) }
                fallbacks: { api\(i).example.com: [backup\(i).example.net] }

            """
        }
        return yaml
    }

    @Test func tenThousandServices() async throws {
        let (yaml, compilation, elapsed) = await offThePool {
            let yaml = Self.generatedPolicy(services: 10_000)
            var result: PolicyCompilation?
            let elapsed = threadCPUTime { result = compile(yaml, name: "generated.yaml") }
            return (yaml, result!, elapsed)
        }
        #expect(yaml.utf8.count > 1_000_000)
        #expect(compilation.diagnostics == [])
        let graph = try #require(compilation.graph)
        #expect(graph.services.count == 10_000)
        #expect(graph.route(for: "https://x.api9876.example.com/v1/search")?.service?.name == "svc-9876")
        #expect(graph.route(for: "https://api4321.example.com/v1/search")?.rateLimit == RateLimit(requestsPerSecond: 2, burst: 2))
        // Debug builds are ~10x slower than release; this bound only catches quadratic behaviour. It is the
        // compiling thread's CPU time, which other work on a loaded machine does not inflate.
        #expect(elapsed < .seconds(8), "compiling 10,000 services took \(elapsed) of CPU")
        print("10,000-service policy (\(yaml.utf8.count) bytes) compiled in \(elapsed) of CPU")
    }

    @Test func tenThousandPlainServices() async throws {
        let (result, elapsed) = await offThePool {
            let yaml = Self.generatedPolicy(services: 10_000, rich: false)
            var result: PolicyCompilation?
            let elapsed = threadCPUTime { result = compile(yaml, name: "generated.yaml") }
            return (result, elapsed)
        }
        #expect(result?.diagnostics.map(\.rule) == ["unused-authoriser"])
        #expect(result?.graph?.services.count == 10_000)
        #expect(elapsed < .seconds(8), "compiling 10,000 services took \(elapsed) of CPU")
        print("10,000-service plain policy compiled in \(elapsed) of CPU")
    }

    @Test func duplicateHostsAmongManyServicesAreAllFound() async throws {
        let result = await offThePool {
            var yaml = Self.generatedPolicy(services: 2_000)
            yaml += "  dup-a:\n    hosts: [api17.example.com]\n  dup-b:\n    hosts: [\"*.api42.example.com\"]\n"
            return compile(yaml, name: "generated.yaml")
        }
        #expect(result.rules("host-claimed-twice").count == 2)
    }
}
