@testable import CourierCoordination
import CourierCore
import Testing

@Suite struct FleetKeysTests {
    @Test func aRateLimitKeyNamesItsEndpointInAHashTagAndChangesWithTheSettings() {
        let keys = FleetKeys(prefix: "courier:app:")
        let key = keys.rateLimit(endpointKey: "api.example.com/v1", limit: RateLimit(requestsPerSecond: 20, burst: 20))
        #expect(key.hasPrefix("courier:app:rl:{api.example.com/v1}:"))
        #expect(key.count == "courier:app:rl:{api.example.com/v1}:".count + 12)
        #expect(key != keys.rateLimit(endpointKey: "api.example.com/v1", limit: RateLimit(requestsPerSecond: 20, burst: 21)))
        #expect(key != keys.rateLimit(endpointKey: "api.example.com/v1", limit: RateLimit(requestsPerSecond: 21, burst: 20)))
        #expect(key == keys.rateLimit(endpointKey: "api.example.com/v1", limit: RateLimit(requestsPerSecond: 20, burst: 20)))
    }

    @Test func aTokenKeyNamesNoSecretAndItsLockSharesItsHashTag() {
        let keys = FleetKeys()
        let identity = "https://auth.example.com/token|client-1|read write"
        let record = keys.token(identity: identity)
        let lock = keys.tokenLock(identity: identity)
        #expect(!record.contains("auth.example.com") && !record.contains("client-1"))
        #expect(lock == record + ":lock")
        let tag = { (key: String) in key[key.firstIndex(of: "{")!...key.firstIndex(of: "}")!] }
        #expect(tag(record) == tag(lock))
        #expect(record != keys.token(identity: identity + "x"))
        #expect(keys.instances == "courier:instances")
    }
}
