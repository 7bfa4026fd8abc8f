@testable import CourierCoordination
import CourierCore
import CourierRedis
import CourierTestSupport
import Testing

/// The prefix the tests' keys live under.
let testPrefix = "courier:test:"

/// A coordinator of `url`'s Redis. The heartbeat is slow unless a test asks otherwise, so that only the test's own
/// calls write.
func makeCoordinator(
    _ url: String,
    prefix: String = testPrefix,
    instanceID: String = FleetConfiguration.randomInstanceID(),
    heartbeat: Duration = .seconds(60),
    lapse: Duration = .seconds(180),
    commandTimeout: Duration = .seconds(2),
    connectTimeout: Duration = .seconds(2)
) throws -> FleetCoordinator {
    let redis = RedisConfiguration(url: try RedisURL(url), connectTimeout: connectTimeout, commandTimeout: commandTimeout)
    return FleetCoordinator(configuration: FleetConfiguration(
        redis: redis, keys: FleetKeys(prefix: prefix), instanceID: instanceID, heartbeatInterval: heartbeat, heartbeatLapse: lapse
    ))
}

/// A plain client, to look at what the fleet wrote (the caller shuts it down).
func inspector(_ server: RedisServer) throws -> RedisClient {
    RedisClient(configuration: RedisConfiguration(url: try RedisURL(server.url()), connectTimeout: .seconds(2), commandTimeout: .seconds(2)))
}

/// A fresh redis-server, a coordinator of it (not started) and an inspector (the caller shuts both down).
func startServerWithCoordinator() async throws -> (server: RedisServer, coordinator: FleetCoordinator, redis: RedisClient) {
    let server = try await RedisServer.start()
    return (server, try makeCoordinator(server.url()), try inspector(server))
}

/// The wait of a `.go`; nil (and a recorded issue) for anything else.
func goWait(_ admission: FleetAdmission, sourceLocation: Testing.SourceLocation = #_sourceLocation) -> Duration? {
    guard case .go(let wait) = admission else {
        Issue.record("expected .go, got \(admission)", sourceLocation: sourceLocation)
        return nil
    }
    return wait
}

/// The Redis error of an `.unavailable`; nil (and a recorded issue) for anything else.
func unavailableError(_ admission: FleetAdmission, sourceLocation: Testing.SourceLocation = #_sourceLocation) -> RedisError? {
    guard case .unavailable(let error) = admission else {
        Issue.record("expected .unavailable, got \(admission)", sourceLocation: sourceLocation)
        return nil
    }
    return error
}

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.nanosecondsClamped) / 1e6
}

func milliseconds(since start: Deadline) -> Double {
    milliseconds(Deadline.now() - start)
}

/// Polls `condition` every 10 ms for at most `seconds`; whether it came true.
func eventually(within seconds: Double, _ condition: () async -> Bool) async -> Bool {
    let end = Deadline.now() + .seconds(seconds)
    while Deadline.now() < end {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return await condition()
}
