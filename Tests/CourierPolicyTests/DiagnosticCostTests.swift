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

    @Test func unknownAuthoriserWithALongNameBesideANearOne() async throws {
        let yaml = HostilePolicies.nearLongAuthoriserNames(length: 100_000)
        let (result, elapsed) = await Self.timedCompile(yaml)
        #expect(result.rules("unknown-authoriser").count == 1)
        #expect(result.graph == nil)
        #expect(elapsed < HostilePolicies.linearBound(yaml), "\(yaml.utf8.count) bytes took \(elapsed) of CPU")
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
        #expect(elapsed < HostilePolicies.linearBound(yaml), "\(yaml.utf8.count) bytes took \(elapsed) of CPU")
    }

    @Test func aliasedLongKeysRepeatedAsDuplicatesAreCappedAndShort() async throws {
        // 195 KB that once printed 800 MB: every duplicate-key message quoted the 100,000-character key.
        let limit = PolicyLimits.default.maxDiagnosticsPerFile
        let yaml = HostilePolicies.aliasedDuplicateKeys(keyLength: 100_000, aliases: 8_000)
        let (result, elapsed) = await Self.timedCompile(yaml)
        #expect(result.diagnostics.count == limit + 1)
        #expect(result.summary.first == "unknown-key@2")
        #expect(result.rules("duplicate-key").count == limit - 1)
        let count = try #require(result.rules("too-many-diagnostics").first)
        // 8,000 duplicates and the unknown key 'x' at the top level: 8,001 diagnostics, 100 shown.
        #expect(count.message == "7901 more diagnostics in this file are not shown: 7901 errors, 0 warnings")
        #expect(count.severity == .warning)
        #expect(result.diagnostics.last == count, "the count comes after the diagnostics shown")
        let printed = result.diagnostics.reduce(0) { $0 + $1.message.utf8.count + ($1.suggestion?.utf8.count ?? 0) }
        #expect(printed < 40_000, "\(printed) bytes of messages for \(yaml.utf8.count) bytes of input")
        #expect(result.graph == nil)
        #expect(elapsed < HostilePolicies.linearBound(yaml), "\(yaml.utf8.count) bytes took \(elapsed) of CPU")
    }

    @Test func errorsAreKeptBeforeWarningsWhenTheCapCuts() {
        // Three warnings (unused authorisers) early in the file, one error (an unknown key) at its end; with
        // a cap of 2 the error must still be shown, or the file would look as if it compiled.
        let yaml = """
        version: 1
        authorisers:
          a: {plugin: static-bearer, settings: {token: '${env:T}'}}
          b: {plugin: static-bearer, settings: {token: '${env:T}'}}
          c: {plugin: static-bearer, settings: {token: '${env:T}'}}
        nonsense: 1

        """
        let result = compile(yaml, limits: PolicyLimits(maxDiagnosticsPerFile: 2))
        #expect(result.summary == ["unused-authoriser@3", "unknown-key@6", "too-many-diagnostics@6"])
        #expect(result.rules("too-many-diagnostics").first?.message == "2 more diagnostics in this file are not shown: 0 errors, 2 warnings")
        #expect(result.hasErrors)
        let uncapped = compile(yaml)
        #expect(uncapped.summary == ["unused-authoriser@3", "unused-authoriser@4", "unused-authoriser@5", "unknown-key@6"])
    }

    @Test func everyMessageQuotesUserTextShortened() async throws {
        // One long name, aliased everywhere user text reaches a message: as a service's authoriser, as a
        // host, a scheme, a duration, a retry condition and method, a header name and an endpoint key.
        let long = String(repeating: "n", count: 50_000)
        var yaml = "version: 1\nx-anchor: &n \(long)\nservices:\n"
        for i in 0..<200 {
            yaml += """
              s\(i):
                hosts: [*n]
                scheme: *n
                authoriser: *n
                timeouts: {total: *n}
                retry: {on: [*n], methods: [*n], idempotency-key: *n}
                rate-limit: {endpoints: {*n : {requests-per-second: 1}}}

            """
        }
        let result = compile(yaml, limits: PolicyLimits(maxDiagnosticsPerFile: 1_000_000))
        // An aliased node reports at its anchor, so each problem is said once, not once per service.
        let rules = Set(result.diagnostics.map(\.rule))
        #expect(rules.isSuperset(of: ["invalid-host-pattern", "invalid-value", "unknown-authoriser", "invalid-duration", "invalid-retry-condition", "invalid-endpoint"]), "\(rules)")
        for d in result.diagnostics {
            #expect(d.message.utf8.count < 400 && (d.suggestion?.utf8.count ?? 0) < 400, "\(d.rule): \(d.message.prefix(200))")
        }
    }
}
