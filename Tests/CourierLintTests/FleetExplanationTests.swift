import CourierCore
import CourierLint
import CourierPolicy
import Foundation
import Testing

/// `courier explain` for a policy with a coordination backend: the scope of the route's limit with its origin,
/// the backend (never a credential) and the on-unavailable mode when the route uses it, and which authoriser
/// shares its tokens.
@Suite struct FleetExplanationTests {
    static let policy = Fixtures.path("explain/fleet.yaml")

    func explain(_ url: String) throws -> RouteExplanation {
        let compilation = PolicyCompiler().compile(file: Self.policy)
        #expect(compilation.diagnostics.map(\.rule) == ["secret-literal"], "the literal password, on purpose")
        let graph = try #require(compilation.graph)
        return RouteExplanation(graph: graph, url: try #require(HTTPURL(url)))
    }

    func json(_ e: RouteExplanation) throws -> [String: Any] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(e)
        #expect(!String(decoding: data, as: UTF8.self).contains("hunter2"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func aFleetLimitShowsItsScopeBackendAndFailureMode() throws {
        let e = try explain("https://partner.example.com/v2/orders")
        #expect(e.value("rate-limit.scope")?.value == "fleet")
        #expect(e.value("rate-limit.scope")?.origin.description == "\(Self.policy):21")
        #expect(e.value("coordination.redis")?.value == "rediss://redis.internal:6380/2")
        #expect(e.value("coordination.redis")?.origin.description == "\(Self.policy):5")
        #expect(e.value("coordination.redis.key-prefix")?.value == "courier:orders:")
        #expect(e.value("coordination.redis.key-prefix")?.origin.description == "\(Self.policy):7")
        #expect(e.value("coordination.on-unavailable")?.value == "closed")
        #expect(e.value("coordination.on-unavailable")?.origin.description == "\(Self.policy):9")
        #expect(e.value("authorisers.partner-oauth.share-tokens")?.value == "true")
        let c = try #require(e.coordination)
        #expect(c.sharesRateLimit)
        #expect(c.sharedTokensAuthoriser == "partner-oauth")
        #expect(c.whileUnavailable.contains("loads fail"))
        #expect(e.worstCase.rateLimit?.scope == .fleet)
        for v in e.values { #expect(!v.value.contains("hunter2"), "\(v.key)") }

        let object = try json(e)
        let coordination = try #require(object["coordination"] as? [String: Any])
        #expect(coordination["backend"] as? String == "rediss://redis.internal:6380/2")
        #expect(coordination["onUnavailable"] as? String == "closed")
        #expect(coordination["keyPrefix"] as? String == "courier:orders:")
        #expect(coordination["sharesRateLimit"] as? Bool == true)
        #expect(coordination["sharedTokensAuthoriser"] as? String == "partner-oauth")
        let rate = try #require((object["worstCase"] as? [String: Any])?["rateLimit"] as? [String: Any])
        #expect(rate["scope"] as? String == "fleet")
    }

    @Test func anEndpointOverrideInheritsOrSetsItsScope() throws {
        let reports = try explain("https://partner.example.com/v2/reports")
        #expect(reports.value("rate-limit.endpoints./v2/reports")?.value == "1 req/s, burst 1")
        #expect(reports.value("rate-limit.scope")?.value == "fleet")
        #expect(reports.value("rate-limit.scope")?.origin.description == "\(Self.policy):21", "inherited from the service")
        let health = try explain("https://partner.example.com/v2/health")
        #expect(health.value("rate-limit.scope")?.value == "process")
        #expect(health.value("rate-limit.scope")?.origin.description == "\(Self.policy):24", "its own")
        // The route still reaches Redis for its tokens, but not for its limit.
        let c = try #require(health.coordination)
        #expect(!c.sharesRateLimit)
        #expect(c.sharedTokensAuthoriser == "partner-oauth")
    }

    @Test func aRouteThatSharesNothingShowsNoBackend() throws {
        let e = try explain("https://local.example.com/x")
        #expect(e.value("rate-limit.scope")?.value == "process")
        #expect(e.value("rate-limit.scope")?.origin == .builtInDefault)
        #expect(e.value("coordination.redis") == nil)
        #expect(e.coordination == nil)
        let object = try json(e)
        #expect(object["coordination"] is NSNull)
        #expect(((object["worstCase"] as? [String: Any])?["rateLimit"] as? [String: Any])?["scope"] as? String == "process")
        // An unlimited route has no scope to show.
        let unlimited = try explain("https://unclaimed.example.org/")
        #expect(unlimited.value("rate-limit")?.value == "unlimited")
        #expect(unlimited.value("rate-limit.scope") == nil)
    }

    @Test func eachFailureModeIsSaidInWords() throws {
        let graph = try #require(PolicyCompiler().compile(source: """
            version: 1
            coordination:
              redis: { url: "redis://127.0.0.1" }
              on-unavailable: open
            services:
              s: { hosts: [s.example.com], rate-limit: { requests-per-second: 1, scope: fleet } }
            """, path: Fixtures.path("inline.yaml")).graph)
        let url = try #require(HTTPURL("https://s.example.com/"))
        let open = try #require(RouteExplanation(graph: graph, url: url).coordination)
        #expect(open.onUnavailable == "open")
        #expect(open.whileUnavailable.contains("dropped"))
        #expect(open.backend == "redis://127.0.0.1:6379/0")
        #expect(open.keyPrefix == "courier:", "the default")
    }
}
