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

    @Test func aRateLimitKeyParsesBackIntoItsEndpointKeyAndSettings() throws {
        let keys = FleetKeys(prefix: "courier:app:")
        let limit = RateLimit(requestsPerSecond: 50, burst: 10)
        for endpoint in ["api.example.com/v1", "", "odd}:key{", "h/é"] {
            let parsed = try #require(keys.parseRateLimit(keys.rateLimit(endpointKey: endpoint, limit: limit)))
            #expect(parsed.endpointKey == endpoint)
            #expect(parsed.settings == FleetKeys.settingsHash(limit))
        }
        #expect(keys.parseRateLimit("courier:other:rl:{a}:0123456789ab") == nil, "another prefix")
        #expect(keys.parseRateLimit("courier:app:rl:{a}:0123456789aZ") == nil, "not hex")
        #expect(keys.parseRateLimit("courier:app:rl:{a}0123456789ab") == nil, "no }:")
        #expect(keys.parseRateLimit("courier:app:rl:junk") == nil)
        #expect(keys.parseRateLimit("courier:app:instances") == nil)
    }

    @Test func theScanPatternEscapesTheGlobCharactersOfThePrefix() {
        #expect(FleetKeys().rateLimitPattern == "courier:rl:*")
        #expect(FleetKeys(prefix: "app[1]*?\\:").rateLimitPattern == "app\\[1\\]\\*\\?\\\\:rl:*")
    }
}
