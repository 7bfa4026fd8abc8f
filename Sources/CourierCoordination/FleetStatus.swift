internal import CourierCore
internal import CourierRedis

/// The fleet's state as Redis holds it, read without writing anything (``FleetCoordinator/status(maxKeys:)``,
/// for `courier fleet status`). Times are relative to Redis's own clock when the reading began.
package struct FleetStatus: Sendable, Equatable {
    /// One live instance.
    package struct Instance: Sendable, Equatable {
        package var id: String
        /// Until its heartbeat lapses unless renewed (up to the heartbeat's lapse, 3 s by default).
        package var lapsesIn: Duration
    }

    /// One fleet rate limit's key and state.
    package struct RateLimitState: Sendable, Equatable {
        /// The Redis key.
        package var key: String
        package var endpointKey: String
        /// The settings hash in the key's name (12 hex digits of the rate and burst).
        package var settings: String
        /// From the stored emission interval; nil when the hash holds none (a key only ever paused by an older
        /// writer) or the interval is 0 (a limit without a rate: only pauses).
        package var requestsPerSecond: Double?
        package var burst: Int?
        /// When the next request may go: zero if now.
        package var nextAllowedIn: Duration
        /// The Retry-After pause left: zero if none.
        package var pauseLeft: Duration
    }

    /// The live instances, by id.
    package var instances: [Instance]
    /// The rate-limit keys found, by endpoint key, then settings.
    package var rateLimits: [RateLimitState]
    /// False when the key scan stopped at its bound (`maxKeys`, or its number of `SCAN` calls) before the end.
    package var complete: Bool

    /// The state of rate-limit `key`, whose name `keys` parses, from its hash `fields` at Redis time `now`
    /// (microseconds); nil when the name is not a rate-limit key's or the hash is empty (it expired meanwhile).
    package static func rateLimitState(key: String, fields: [String: String], now: Int64, keys: FleetKeys) -> RateLimitState? {
        guard let (endpointKey, settings) = keys.parseRateLimit(key), !fields.isEmpty else { return nil }
        let interval = fields["interval"].flatMap { Int64($0) }.flatMap { $0 > 0 ? $0 : nil }
        let burst = fields["burst"].flatMap { Int($0) }
        let tat = fields["tat"].flatMap(microseconds) ?? now
        let paused = fields["paused"].flatMap(microseconds) ?? 0
        let (product, overflow) = (interval ?? 0).multipliedReportingOverflow(by: Int64(max(0, (burst ?? 1) - 1)))
        let tolerance = overflow ? FleetScripts.largestTolerance : min(product, FleetScripts.largestTolerance)
        let at = max(now, tat - tolerance, paused)
        return RateLimitState(
            key: key, endpointKey: endpointKey, settings: settings,
            requestsPerSecond: interval.map { 1_000_000 / Double($0) }, burst: burst,
            nextAllowedIn: .microseconds(at - now), pauseLeft: .microseconds(max(0, paused - now))
        )
    }

    /// A number Redis stored (a score, or `%.0f` text) as whole microseconds; nil unless it is a finite number
    /// within ±2⁶² (anything else is not the fleet's).
    static func microseconds(_ text: String) -> Int64? {
        guard let value = Double(text), value.isFinite, abs(value) < 0x1p62 else { return nil }
        return Int64(value)
    }

    /// Reads the status through `client`: Redis's `TIME`, the live set's unlapsed members, and `SCAN` over the
    /// rate-limit keys (`COUNT 1000` a call, at most 10,000 calls and `maxKeys` keys) with `HGETALL` on each.
    /// Read-only: `TIME`, `ZRANGEBYSCORE`, `SCAN`, `HGETALL`. A key that is not a hash is skipped.
    static func read(client: RedisClient, keys: FleetKeys, maxKeys: Int, timeout: Duration) async throws(RedisError) -> FleetStatus {
        let backend = client.backend
        func malformed(_ what: String) -> RedisError { RedisError(.protocolViolation, "\(what) is not what Redis answers", backend: backend) }
        func send(_ command: RedisCommand) async throws(RedisError) -> RESPValue {
            try await client.send(command, deadline: .now() + timeout)
        }
        let time = try await send(RedisCommand("TIME")).elements ?? []
        guard time.count == 2, let seconds = time[0].string.flatMap({ Int64($0) }), let micros = time[1].string.flatMap({ Int64($0) }) else {
            throw malformed("the TIME reply")
        }
        guard (0..<(1 << 40)).contains(seconds), (0..<1_000_000).contains(micros) else { throw malformed("the TIME reply") }
        let now = seconds * 1_000_000 + micros

        let members = try await send(RedisCommand("ZRANGEBYSCORE", keys.instances, "(\(now)", "+inf", "WITHSCORES")).elements ?? []
        var instances: [Instance] = []
        for pair in stride(from: 0, to: members.count - 1, by: 2) {
            guard let id = members[pair].string, let score = members[pair + 1].string.flatMap(microseconds) else {
                throw malformed("the live set's reply")
            }
            instances.append(Instance(id: id, lapsesIn: .microseconds(max(0, score - now))))
        }

        var found: [String] = []
        var seen: Set<String> = []
        var cursor = "0"
        var calls = 0
        repeat {
            let reply = try await send(RedisCommand("SCAN", cursor, "MATCH", keys.rateLimitPattern, "COUNT", "1000")).elements ?? []
            guard reply.count == 2, let next = reply[0].string, let batch = reply[1].elements else { throw malformed("the SCAN reply") }
            for key in batch.compactMap(\.string) where seen.insert(key).inserted { found.append(key) }
            cursor = next
            calls += 1
        } while cursor != "0" && found.count < maxKeys && calls < 10_000

        var rateLimits: [RateLimitState] = []
        for key in found.prefix(maxKeys) where keys.parseRateLimit(key) != nil {
            let reply: RESPValue
            do {
                reply = try await send(RedisCommand("HGETALL", key))
            } catch where error.serverCode == "WRONGTYPE" {
                continue
            }
            let flat = reply.elements ?? []
            var fields: [String: String] = [:]
            for pair in stride(from: 0, to: flat.count - 1, by: 2) {
                if let name = flat[pair].string, let value = flat[pair + 1].string { fields[name] = value }
            }
            if let state = rateLimitState(key: key, fields: fields, now: now, keys: keys) { rateLimits.append(state) }
        }
        return FleetStatus(
            instances: instances.sorted { $0.id < $1.id },
            rateLimits: rateLimits.sorted { ($0.endpointKey, $0.settings) < ($1.endpointKey, $1.settings) },
            complete: cursor == "0" && found.count <= maxKeys
        )
    }
}
