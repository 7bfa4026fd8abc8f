package import CourierCore
package import CourierRedis

/// The fleet's Lua scripts and the arguments they take. Each touches one key, reads Redis's own clock (`TIME`,
/// microseconds since the epoch: about 1.7 × 10¹⁵, exact in a Lua double, which is exact to 2⁵³) and writes
/// numbers back as integers (`%.0f`: Lua's own `tostring` keeps 14 digits and would round them).
///
/// Every duration goes in and comes out in whole microseconds. A limit's emission interval is rounded up to one
/// (so the fleet never goes faster than the policy says: 3 req/s runs at 2.999997), at least 1 µs and at most a day.
package enum FleetScripts {
    /// A GCRA admission with reservation, as `RateLimiterStateMachine` computes it: `at = max(now, TAT − tolerance,
    /// paused)`, then `TAT = max(TAT, at) + interval`; the key expires when both TAT and the pause are past.
    ///
    /// KEYS[1]: the rate-limit hash. ARGV: interval (µs), tolerance (µs, `(burst − 1) × interval`), burst, then
    /// one longest acceptable wait per request admitted (µs, −1 for none): one request, or a batch of one process's
    /// requests for the key, admitted in order as that many calls would be. Returns `{allowed, wait}` per request:
    /// `{1, wait}` with the slot reserved, or `{0, wait}` with nothing reserved when the wait exceeds the longest
    /// acceptable one.
    package static let admit = RedisScript("""
        if redis.replicate_commands then redis.replicate_commands() end
        local time = redis.call('TIME')
        local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
        local state = redis.call('HMGET', KEYS[1], 'tat', 'paused')
        local tat = tonumber(state[1]) or now
        local paused = tonumber(state[2]) or 0
        local interval = tonumber(ARGV[1])
        local tolerance = tonumber(ARGV[2])
        local out = {}
        local reserved = false
        for i = 4, #ARGV do
            local at = math.max(now, tat - tolerance, paused)
            local wait = at - now
            local longest = tonumber(ARGV[i])
            if longest >= 0 and wait > longest then
                out[#out + 1] = 0
            else
                tat = math.max(tat, at) + interval
                reserved = true
                out[#out + 1] = 1
            end
            out[#out + 1] = wait
        end
        if reserved then
            redis.call('HSET', KEYS[1], 'tat', string.format('%.0f', tat), 'interval', ARGV[1], 'burst', ARGV[3])
            redis.call('PEXPIRE', KEYS[1], string.format('%.0f', math.max(1, math.ceil((math.max(tat, paused) - now) / 1000))))
        end
        return out
        """)

    /// A Retry-After pause, only ever lengthened; the key's expiry moves with it.
    ///
    /// KEYS[1]: the rate-limit hash. ARGV: the pause (µs, positive), interval (µs), burst. Returns the pause left
    /// (µs): this one, or a longer one already stored.
    package static let pause = RedisScript("""
        if redis.replicate_commands then redis.replicate_commands() end
        local time = redis.call('TIME')
        local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
        local ends = now + tonumber(ARGV[1])
        local state = redis.call('HMGET', KEYS[1], 'tat', 'paused')
        local tat = tonumber(state[1]) or 0
        local paused = tonumber(state[2]) or 0
        if ends > paused then
          paused = ends
          redis.call('HSET', KEYS[1], 'paused', string.format('%.0f', paused), 'interval', ARGV[2], 'burst', ARGV[3])
        end
        redis.call('PEXPIRE', KEYS[1], string.format('%.0f', math.max(1, math.ceil((math.max(tat, paused) - now) / 1000))))
        return paused - now
        """)

    /// Renews one instance's heartbeat, removes the lapsed ones, and counts the rest; the set expires when its
    /// last member lapses.
    ///
    /// KEYS[1]: the live set. ARGV: the instance id, the lapse (µs). Returns the number of live instances.
    package static let heartbeat = RedisScript("""
        if redis.replicate_commands then redis.replicate_commands() end
        local time = redis.call('TIME')
        local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
        redis.call('ZADD', KEYS[1], string.format('%.0f', now + tonumber(ARGV[2])), ARGV[1])
        redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%.0f', now))
        local last = redis.call('ZRANGE', KEYS[1], '-1', '-1', 'WITHSCORES')
        redis.call('PEXPIRE', KEYS[1], string.format('%.0f', math.max(1, math.ceil((tonumber(last[2]) - now) / 1000))))
        return redis.call('ZCARD', KEYS[1])
        """)

    /// The longest emission interval: a day (a rate below one request a day is taken as one a day).
    static let longestInterval: Int64 = 86_400_000_000
    /// The largest tolerance: 2⁵⁰ µs (35 years), so `TAT − tolerance` stays exact however large the burst.
    static let largestTolerance: Int64 = 1 << 50

    /// The emission interval of `limit` in microseconds, rounded up; 0 for a rate that is not a positive number
    /// (then only a pause holds requests back, as in `RateLimiterStateMachine`).
    package static func intervalMicroseconds(_ limit: RateLimit) -> Int64 {
        let rate = limit.requestsPerSecond
        guard rate > 0, rate.isFinite else { return 0 }
        let interval = (1_000_000 / rate).rounded(.up)
        return interval >= Double(longestInterval) ? longestInterval : max(1, Int64(interval))
    }

    /// `admit`'s arguments for one request under `limit`, refusing waits over `maxWait` (nil: none refused).
    package static func admitArguments(limit: RateLimit, maxWait: Duration?) -> [[UInt8]] {
        admitArguments(limit: limit, maxWaits: [maxWait])
    }

    /// `admit`'s arguments for a batch of requests under `limit`, in order, each refusing waits over its own
    /// `maxWaits` entry.
    package static func admitArguments(limit: RateLimit, maxWaits: [Duration?]) -> [[UInt8]] {
        let interval = intervalMicroseconds(limit)
        let (product, overflow) = interval.multipliedReportingOverflow(by: Int64(max(0, limit.burst - 1)))
        let tolerance = overflow ? largestTolerance : min(product, largestTolerance)
        let longest = maxWaits.map { wait in wait.map { max(0, microseconds($0)) } ?? -1 }
        return ([interval, tolerance, Int64(max(1, limit.burst))] + longest).map { Array(String($0).utf8) }
    }

    /// `pause`'s arguments: `duration` (positive) and the limit's settings.
    package static func pauseArguments(limit: RateLimit, duration: Duration) -> [[UInt8]] {
        [max(1, microseconds(duration)), intervalMicroseconds(limit), Int64(max(1, limit.burst))].map { Array(String($0).utf8) }
    }

    /// `heartbeat`'s arguments.
    package static func heartbeatArguments(instanceID: String, lapse: Duration) -> [[UInt8]] {
        [Array(instanceID.utf8), Array(String(max(1, microseconds(lapse))).utf8)]
    }

    /// Whole microseconds of `duration`, truncated, saturating at 2⁵⁰ (35 years) either way.
    static func microseconds(_ duration: Duration) -> Int64 {
        let value = duration.nanosecondsClamped / 1_000
        return min(max(value, -largestTolerance), largestTolerance)
    }
}
