import CourierAuthorisers
import CourierCoordination
import CourierCore
import CourierRedis
import CourierTestSupport
import Foundation
import Testing

/// Eight instances (each its own plugin instance, Redis client and token store, as eight processes would have)
/// share one OAuth token through a real redis-server, against a real token endpoint on 127.0.0.1 that rotates
/// refresh tokens and revokes the family on a replay.
@Suite(.serialized, .timeLimit(.minutes(2))) struct FleetTokenTests {
    @Test func eightInstancesRefreshOnceAtAColdStartAndOnceAfterAFleetWide401() async throws {
        let (redis, tokens, fleet) = try await startFleet(8, OAuth2RefreshPlugin.self, FleetMember.refreshSettings)
        defer { withExtendedLifetime(redis) { tokens.stop(); fleet.forEach { $0.shutdown() } } }

        // Cold start: 8 x 20 concurrent calls, one refresh for the fleet.
        let first = try await authoriseEverywhere(fleet, calls: 20)
        #expect(first.count == 160)
        #expect(Set(first) == ["Bearer " + tokens.accessToken(1)])
        #expect(tokens.refreshes == 1)

        // Every call of every instance meets a 401 with that token at once, then authorises again.
        let refusedHeader = first[0]
        let second = try await authoriseEverywhere(fleet, calls: 20) { await $0.refused(refusedHeader) }
        #expect(second.count == 160)
        #expect(Set(second) == ["Bearer " + tokens.accessToken(2)])
        #expect(tokens.refreshes == 2)
        #expect(tokens.replays == 0 && !tokens.revoked)
        #expect(tokens.requests == 2)

        // Neither the access tokens nor any refresh token is in Redis in clear: not in a key, not in a value.
        let scan = try await everyKeyAndValue(fleet[0].redis)
        #expect(scan.contains { $0.key.contains(":token:{") && !$0.values.isEmpty })  // the record is there, sealed
        #expect(!scan.contains { $0.key.hasSuffix(":lock") })  // and the lock was released
        let secrets = tokens.secrets
        #expect(secrets.count == 5)
        for (name, values) in scan {
            for secret in secrets {
                #expect(!name.contains(secret))
                #expect(!values.contains { $0.contains(text: secret) }, "\(name) holds a token in clear")
            }
        }
    }

    @Test func clientCredentialsAreSharedWithOneTokenRequestForTheFleet() async throws {
        let (redis, tokens, fleet) = try await startFleet(8, OAuth2ClientCredentialsPlugin.self, FleetMember.clientCredentialsSettings)
        defer { withExtendedLifetime(redis) { tokens.stop(); fleet.forEach { $0.shutdown() } } }
        let headers = try await authoriseEverywhere(fleet, calls: 20)
        #expect(headers.count == 160)
        #expect(Set(headers).count == 1)
        #expect(tokens.clientCredentialGrants == 1)
    }

    /// An instance whose key differs from the fleet's gets the clear error, naming the token key; so does one that
    /// finds its record altered.
    @Test func aRecordSealedWithAnotherKeyOrAlteredIsAClearError() async throws {
        let redis = try await RedisServer.start()
        let tokens = try RotatingTokenServer()
        defer { tokens.stop() }
        let settings = FleetMember.refreshSettings(tokens)
        let good = try FleetMember(redisURL: redis.url(), tokenKey: FleetMember.randomKey(), plugin: OAuth2RefreshPlugin.self, settings: settings)
        let stranger = try FleetMember(redisURL: redis.url(), tokenKey: FleetMember.randomKey(), plugin: OAuth2RefreshPlugin.self, settings: settings)
        let late = try FleetMember(redisURL: redis.url(), tokenKey: FleetMember.randomKey(), plugin: OAuth2RefreshPlugin.self, settings: settings)
        defer { withExtendedLifetime(redis) { [good, stranger, late].forEach { $0.shutdown() } } }

        #expect(try await good.authorise() == "Bearer " + tokens.accessToken(1))
        await #expect {
            _ = try await stranger.authorise()
        } throws: { error in
            let e = error as? AuthoriserError
            return e?.kind == .sharedTokenUnreadable && e?.authoriser == "fleet-auth" && e?.description.contains("token-key") == true
        }

        // Alter one byte of the sealed record: the instance that wrote it cannot open it either.
        let record = try #require(try await everyKeyAndValue(good.redis).first { $0.key.contains(":token:{") })
        var altered = try #require(record.values.first)
        altered[altered.count / 2] ^= 0x01
        _ = try await good.redis.send(RedisCommand("SET", arguments: [Array(record.key.utf8), altered]))
        // (Its in-memory token is still good; a 401 makes it go to the store.)
        await good.refused("Bearer " + tokens.accessToken(1))
        await #expect {
            _ = try await good.authorise()
        } throws: { ($0 as? AuthoriserError)?.kind == .sharedTokenUnreadable }
        await #expect {
            _ = try await late.authorise()
        } throws: { ($0 as? AuthoriserError)?.kind == .sharedTokenUnreadable }
        #expect(tokens.refreshes == 1)  // nobody refreshed past a record it could not read
    }

    /// Redis unreachable: with `.local` every instance refreshes in its own process and loads go on (the rotating
    /// server then sees the replay the shared store exists to prevent); with `.failClosed` the typed error.
    @Test func redisUnreachableRefreshesLocallyOrFailsClosed() async throws {
        let closed = try ClosedPort()
        let tokens = try RotatingTokenServer(delay: .zero)
        defer { tokens.stop() }
        let url = "redis://127.0.0.1:\(closed.port)"
        let key = FleetMember.randomKey()
        let local = try FleetMember(redisURL: url, tokenKey: key, plugin: OAuth2RefreshPlugin.self, settings: FleetMember.refreshSettings(tokens))
        let closedMember = try FleetMember(
            redisURL: url, tokenKey: key, plugin: OAuth2RefreshPlugin.self, settings: FleetMember.refreshSettings(tokens), fallback: .failClosed
        )
        defer { withExtendedLifetime(closed) { [local, closedMember].forEach { $0.shutdown() } } }

        #expect(try await local.authorise() == "Bearer " + tokens.accessToken(1))
        #expect(try await local.authorise() == "Bearer " + tokens.accessToken(1))
        await local.refused("Bearer " + tokens.accessToken(1))
        #expect(try await local.authorise() == "Bearer " + tokens.accessToken(2))  // with the rotated token it kept
        #expect(tokens.refreshes == 2 && tokens.replays == 0)

        await #expect {
            _ = try await closedMember.authorise()
        } throws: { error in
            let e = error as? AuthoriserError
            return e?.kind == .sharedTokensUnavailable && e?.authoriser == "fleet-auth" && (e?.cause as? RedisError)?.kind == .unavailable
        }
        #expect(tokens.refreshes == 2)  // failing closed asked the endpoint nothing
    }

    /// Redis killed after the fleet shared a token: with `.local` a load still gets a token; back on Redis, the
    /// fleet shares again.
    @Test func redisKilledMidRunDegradesToLocalAndRecovers() async throws {
        let (redis, tokens, fleet) = try await startFleet(2, OAuth2RefreshPlugin.self, FleetMember.refreshSettings, delay: .zero)
        defer { withExtendedLifetime(redis) { tokens.stop(); fleet.forEach { $0.shutdown() } } }
        #expect(Set(try await authoriseEverywhere(fleet, calls: 5)) == ["Bearer " + tokens.accessToken(1)])
        await redis.kill()
        // The first instance meets a 401: Redis is gone, so it refreshes in-process with the refresh token it read.
        await fleet[0].refused("Bearer " + tokens.accessToken(1))
        #expect(try await fleet[0].authorise() == "Bearer " + tokens.accessToken(2))
        #expect(tokens.replays == 0)
        try await redis.restart()
        // Redis came back empty: the other instance's next refresh has no record and uses the token it knows, the
        // spent one — the risk `.local` takes with rotating refresh tokens, made visible.
        await fleet[1].refused("Bearer " + tokens.accessToken(1))
        await #expect {
            _ = try await fleet[1].authorise()
        } throws: { error in
            let e = error as? AuthoriserError
            return e?.kind == .tokenEndpointStatus && e?.description.contains("invalid_grant") == true
        }
        #expect(tokens.replays == 1 && tokens.revoked)
    }
}

/// A redis-server, a rotating token endpoint answering after `delay`, and `count` members sharing one token key.
private func startFleet(
    _ count: Int, _ plugin: any AuthoriserPlugin.Type, _ settings: (RotatingTokenServer) -> [String: PolicyValue],
    delay: Duration = .milliseconds(100)
) async throws -> (RedisServer, RotatingTokenServer, [FleetMember]) {
    let redis = try await RedisServer.start()
    let tokens = try RotatingTokenServer(delay: delay)
    let key = FleetMember.randomKey()
    let fleet = try (0..<count).map { _ in
        try FleetMember(redisURL: redis.url(), tokenKey: key, plugin: plugin, settings: settings(tokens))
    }
    return (redis, tokens, fleet)
}
