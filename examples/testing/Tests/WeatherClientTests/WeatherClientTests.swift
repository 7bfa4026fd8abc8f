import CourierCore
import CourierKit
import CourierTesting
import Testing
import WeatherClient

/// WeatherClient's behaviour under throttling, failure and token expiry, with the weather API and its token endpoint
/// scripted (ScriptedTransport: no network) and the policy's waits taken on a ManualClock the test advances: the
/// suite covers minutes of back-off and Retry-After in well under a second of wall time.
@Suite(.timeLimit(.minutes(1))) struct WeatherClientTests {
    /// A client whose requests the returned transport answers, on the returned clock; the token endpoint hands out
    /// `token-1`, `token-2`, ... (the number of token requests so far).
    static func client() throws -> (WeatherClient, ScriptedTransport, ManualClock) {
        let clock = ManualClock()
        let transport = ScriptedTransport(clock: .manual(clock))
        var configuration = DataLoaderService.Configuration(userAgent: "weather-tests/1")
        configuration.environment = ["WEATHER_REFRESH_TOKEN": "refresh-secret"]
        transport.install(in: &configuration)
        transport.on(.post, "/oauth/token", host: "auth.weather.example") { [unowned transport] request in
            guard request.bodyText.contains("refresh_token=refresh-secret") else { return .status(400) }
            let n = transport.requests.filter { $0.path == "/oauth/token" }.count
            return .json(#"{"access_token":"token-\#(n)","token_type":"Bearer","expires_in":3600}"#)
        }
        return (try WeatherClient(configuration: configuration), transport, clock)
    }

    static let oslo = MockResponse.json(#"{"city":"Oslo","celsius":-3.5}"#)

    @Test func throttlingWithRetryAfterIsWaitedOut() async throws {
        let (client, transport, clock) = try Self.client()
        try transport.enqueue(.tooManyRequests(retryAfter: 30))
        try transport.enqueue(Self.oslo)
        async let forecast = client.forecastResponse(for: "Oslo")
        try await clock.waitForSleepers(1)  // the client waits out Retry-After: 30 on the clock
        clock.advance(by: .seconds(30))
        let response = try await forecast
        #expect(response.status == 200)
        #expect(response.report.attempts.map(\.outcome) == [.status(429), .status(200)])
        #expect(response.report.waits == [.retryAfter(.seconds(30))])
        #expect(transport.requests.filter { $0.path == "/v1/forecast" }.map(\.query) == ["city=Oslo", "city=Oslo"])
        await client.shutdown()
    }

    @Test func twoFailuresAreRetriedAfterThirtySecondsEach() async throws {
        let (client, transport, clock) = try Self.client()
        try transport.enqueue(.status(503))
        try transport.enqueue(.status(503))
        try transport.enqueue(Self.oslo)
        async let forecast = client.forecast(for: "Oslo")
        for _ in 0..<2 {
            try await clock.waitForSleepers(1)
            clock.advance(by: .seconds(30))
        }
        #expect(try await forecast == Forecast(city: "Oslo", celsius: -3.5))
        #expect(clock.elapsed == .seconds(60))
        let calls = transport.requests.filter { $0.path == "/v1/forecast" }.map(\.receivedAt)
        #expect(calls.count == 3 && calls[1] - calls[0] == .seconds(30) && calls[2] - calls[1] == .seconds(30))
        await client.shutdown()
    }

    @Test func threeFailuresAreTheCallersError() async throws {
        let (client, transport, clock) = try Self.client()
        for _ in 0..<3 { try transport.enqueue(.status(503)) }
        let forecast = Task { try await client.forecast(for: "Oslo") }
        for _ in 0..<2 {
            try await clock.waitForSleepers(1)
            clock.advance(by: .seconds(30))
        }
        await #expect(throws: WeatherError.status(503)) { try await forecast.value }
        await client.shutdown()
    }

    @Test func anExpiredTokenIsRefreshedOnceAndTheRequestRetried() async throws {
        let (client, transport, clock) = try Self.client()
        // The API has revoked the first token: it accepts only the second.
        transport.on(.get, "/v1/forecast", host: "api.weather.example", requiringBearerToken: "token-2") { _ in Self.oslo }
        async let loaded = client.forecastResponse(for: "Oslo")
        // The retry with the new token takes the rate limit's next slot (1 per second): a virtual second.
        try await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        let response = try await loaded
        #expect(response.status == 200)
        #expect(response.report.attempts.map(\.outcome) == [.status(401), .status(200)])
        #expect(response.report.waits == [.rateLimit(.seconds(1))])
        #expect(response.report.refreshes.map(\.authoriser) == ["weather-account"])
        #expect(transport.requests.filter { $0.path == "/oauth/token" }.count == 2)
        let sent = transport.requests.filter { $0.host == "api.weather.example" }.map { $0.headers["authorization"] }
        #expect(sent == ["Bearer token-1", "Bearer token-2"])
        await client.shutdown()
    }
}
