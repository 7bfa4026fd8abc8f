import CourierCore
import Testing

@testable import CourierHTTPCache

/// Serving a stored response (RFC 9111 §4, §4.2.4, §5.2.1, §5.2.2; RFC 5861; RFC 8246).
@Suite struct ReuseDecisionTests {
    /// A stored response with lifetime 100 s, at `age` seconds.
    private func decide(age: Double, request: String = "", response: String = "") -> ReuseDecision {
        ReuseDecision(
            freshness: Freshness(lifetime: 100, currentAge: age),
            request: CacheControl(fieldValues: [request]), response: CacheControl(fieldValues: [response])
        )
    }

    @Test(arguments: [
        // §4.2: fresh is served, stale is revalidated.
        (0.0, "", "", ReuseDecision.fresh), (99, "", "", .fresh), (100, "", "", .revalidate),
        // §5.2.1.4 / §5.2.2.4: no-cache forces revalidation even when fresh.
        (0, "no-cache", "", .revalidate), (0, "", "no-cache", .revalidate), (0, "", #"no-cache="Set-Cookie""#, .revalidate),
        // §5.2.1.1: request max-age.
        (50, "max-age=50", "", .fresh), (51, "max-age=50", "", .revalidate), (1, "max-age=0", "", .revalidate),
        (150, "max-age=10, max-stale", "", .revalidate),
        // §5.2.1.3: min-fresh.
        (50, "min-fresh=50", "", .fresh), (51, "min-fresh=50", "", .revalidate),
        // §5.2.1.2: max-stale.
        (130, "max-stale=30", "", .staleAccepted), (131, "max-stale=30", "", .revalidate),
        (1e9, "max-stale", "", .staleAccepted),
        // §4.2.4 / §5.2.2.2: must-revalidate and no-cache win over max-stale.
        (130, "max-stale", "must-revalidate", .revalidate), (130, "max-stale", "no-cache", .revalidate),
        // RFC 5861 §3: stale-while-revalidate.
        (110, "", "stale-while-revalidate=10", .staleWhileRevalidate),
        (111, "", "stale-while-revalidate=10", .revalidate),
        (110, "", "stale-while-revalidate=10, must-revalidate", .revalidate),
        (110, "", "stale-while-revalidate=10, no-cache", .revalidate),
        (110, "no-cache", "stale-while-revalidate=10", .revalidate),
        (110, "max-stale=20", "stale-while-revalidate=10", .staleAccepted),
        // RFC 8246 §2: a fresh immutable response survives a reload's max-age=0, not a forced no-cache.
        (50, "max-age=0", "immutable", .fresh), (50, "min-fresh=90", "immutable", .fresh),
        (50, "no-cache", "immutable", .revalidate), (100, "", "immutable", .revalidate),
        // §5.2.1.7: only-if-cached answers 504 where it would have to go to the origin.
        (0, "only-if-cached", "", .fresh), (100, "only-if-cached", "", .unsatisfiable),
        (0, "only-if-cached, no-cache", "", .unsatisfiable), (120, "only-if-cached, max-stale", "", .staleAccepted),
        (110, "only-if-cached", "stale-while-revalidate=60", .staleWhileRevalidate),
    ] as [(Double, String, String, ReuseDecision)])
    func decision(age: Double, request: String, response: String, expected: ReuseDecision) {
        #expect(decide(age: age, request: request, response: response) == expected,
                "age \(age), request '\(request)', response '\(response)'")
    }

    @Test func servesStoredResponse() {
        #expect(ReuseDecision.fresh.servesStoredResponse)
        #expect(ReuseDecision.staleAccepted.servesStoredResponse)
        #expect(ReuseDecision.staleWhileRevalidate.servesStoredResponse)
        #expect(!ReuseDecision.revalidate.servesStoredResponse)
        #expect(!ReuseDecision.unsatisfiable.servesStoredResponse)
    }

    /// RFC 5861 §4 and RFC 9111 §4.2.4: stale-if-error, which must-revalidate and no-cache forbid.
    @Test(arguments: [
        (50.0, "", "", true),  // fresh: always
        (150, "", "", false),
        (150, "", "stale-if-error=50", true), (151, "", "stale-if-error=50", false),
        (150, "stale-if-error=50", "", true), (150, "stale-if-error=10", "stale-if-error=50", true),
        (150, "", "stale-if-error=50, must-revalidate", false),
        (150, "", "stale-if-error=50, no-cache", false),
        (150, "no-cache", "stale-if-error=50", false),
        (150, "max-stale=60", "", true), (150, "max-stale=10", "", false),
        (150, "max-stale", "must-revalidate", false),
        (100, "", "stale-if-error=0", true), (101, "", "stale-if-error=0", false),
    ] as [(Double, String, String, Bool)])
    func staleIfError(age: Double, request: String, response: String, allowed: Bool) {
        let result = ReuseDecision.staleIfErrorAllows(
            freshness: Freshness(lifetime: 100, currentAge: age),
            request: CacheControl(fieldValues: [request]), response: CacheControl(fieldValues: [response])
        )
        #expect(result == allowed, "age \(age), request '\(request)', response '\(response)'")
    }
}
