import CourierCore
import CourierPolicy
import CourierTestSupport
import Testing

/// Inputs found by fuzzing whose diagnostics once cost far more than the input: time must stay proportional
/// to the file's size. Sizes are chosen so that the old quadratic work takes tens of seconds even in a release
/// build, while the linear work takes well under a second in a debug build.
@Suite(.serialized) struct DiagnosticCostTests {
    /// Compiles `yaml` on a thread of its own and returns the result with the compiling thread's CPU time.
    static func timedCompile(_ yaml: String) async -> (PolicyCompilation, Duration) {
        await offThePool {
            var result: PolicyCompilation?
            let elapsed = threadCPUTime { result = compile(yaml, name: "generated.yaml") }
            return (result!, elapsed)
        }
    }

    /// The bound for linear work in a debug build: a second, plus 5 µs per byte (compiling the 1.7 MB
    /// 10,000-service policy costs about 1 µs per byte in a debug build).
    static func linearBound(_ yaml: String) -> Duration {
        .seconds(1) + .microseconds(5 * yaml.utf8.count)
    }

    @Test func unknownAuthoriserWithALongNameBesideANearOne() async throws {
        let n = 100_000
        let stem = String(repeating: "a", count: n)
        let yaml = """
        version: 1
        authorisers:
          ? \(stem)b
          : {plugin: static-bearer, settings: {token: '${env:T}'}}
        services:
          s:
            hosts: [h.example.com]
            authoriser: \(stem)c

        """
        let (result, elapsed) = await Self.timedCompile(yaml)
        #expect(result.rules("unknown-authoriser").count == 1)
        #expect(result.graph == nil)
        #expect(elapsed < Self.linearBound(yaml), "\(yaml.utf8.count) bytes took \(elapsed) of CPU")
    }

    @Test func manyServicesNamingUnknownAuthorisersBesideManyDeclaredOnes() async throws {
        // 1,000 authorisers and 20,000 services, each naming an unknown authoriser one letter off a declared
        // one: 2 × 10^7 name comparisons if every reference were compared with every name.
        var yaml = "version: 1\nauthorisers:\n"
        for i in 0..<1_000 {
            yaml += "  authoriser-\(i)-with-a-long-descriptive-name-b: {plugin: static-bearer, settings: {token: '${env:T}'}}\n"
        }
        yaml += "services:\n"
        for i in 0..<20_000 {
            yaml += "  s\(i): {hosts: [h\(i).example.com], authoriser: authoriser-\(i % 1_000)-with-a-long-descriptive-name-c}\n"
        }
        let (result, elapsed) = await Self.timedCompile(yaml)
        let unknown = result.rules("unknown-authoriser")
        #expect(unknown.first?.suggestion == "did you mean 'authoriser-0-with-a-long-descriptive-name-b'?")
        #expect(elapsed < Self.linearBound(yaml), "\(yaml.utf8.count) bytes took \(elapsed) of CPU")
    }
}
