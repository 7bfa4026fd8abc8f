package import CourierRedis

/// How a ``FleetCoordinator`` reaches Redis and announces itself: the Redis client's configuration (URL,
/// credentials, TLS, per-command timeout, reconnection), the key layout, this instance's id and its heartbeat.
package struct FleetConfiguration: Sendable {
    /// The backend: the caller builds it from the policy's `coordination.redis` (its `timeout` is
    /// `commandTimeout`, the deadline of every admission, pause and heartbeat).
    package var redis: RedisConfiguration
    /// The keys, under the policy's `key-prefix`.
    package var keys: FleetKeys
    /// This instance's member in the live set: random by default (16 hex digits), so two processes never share one.
    package var instanceID: String
    /// How often the heartbeat is renewed (and the live count read).
    package var heartbeatInterval: Duration
    /// How long a heartbeat counts after it was renewed: an instance that stops renewing (it crashed, or lost
    /// Redis) drops out of every other's count this long after its last renewal. Longer than the interval.
    package var heartbeatLapse: Duration

    package init(
        redis: RedisConfiguration,
        keys: FleetKeys = FleetKeys(),
        instanceID: String = FleetConfiguration.randomInstanceID(),
        heartbeatInterval: Duration = .seconds(1),
        heartbeatLapse: Duration = .seconds(3)
    ) {
        self.redis = redis
        self.keys = keys
        self.instanceID = instanceID
        self.heartbeatInterval = heartbeatInterval
        self.heartbeatLapse = heartbeatLapse
    }

    /// 16 random lower-case hex digits.
    package static func randomInstanceID() -> String {
        let digits = String(UInt64.random(in: .min ... .max), radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Why this configuration cannot run, as a ``RedisError/Kind-swift.enum/configuration`` error; nil when it can.
    package var problem: RedisError? {
        func invalid(_ why: String) -> RedisError { RedisError(.configuration, why, backend: redis.url.endpoint) }
        if instanceID.isEmpty || instanceID.utf8.count > 256 { return invalid("the instance id must have 1 to 256 bytes") }
        if heartbeatInterval <= .zero { return invalid("the heartbeat interval must be positive (it is \(heartbeatInterval))") }
        if heartbeatLapse <= heartbeatInterval {
            return invalid("the heartbeat lapse (\(heartbeatLapse)) must be longer than its interval (\(heartbeatInterval))")
        }
        if keys.prefix.isEmpty { return invalid("the key prefix must not be empty") }
        return nil
    }
}
