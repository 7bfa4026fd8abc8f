internal import CourierCore

extension RouteExplanation: Encodable {
    private enum CodingKeys: String, CodingKey {
        case url, method, service, serviceDefinedAt, match, pattern, reason, endpointKey, values, worstCase, notes, coordination, proxy
    }

    /// The `courier explain --format json` document. Durations are written as the policy language writes them
    /// (`1.5s`) next to their value in seconds; `rateLimit` is null when the route is unlimited.
    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(url, forKey: .url)
        try c.encode(method, forKey: .method)
        try c.encode(service, forKey: .service)
        try c.encode(serviceDefinedAt.map { ValueOrigin.file($0).description }, forKey: .serviceDefinedAt)
        try c.encode(match, forKey: .match)
        try c.encode(pattern, forKey: .pattern)
        try c.encode(reason, forKey: .reason)
        try c.encode(endpointKey, forKey: .endpointKey)
        try c.encode(values, forKey: .values)
        try c.encode(WorstCaseDocument(worstCase), forKey: .worstCase)
        try c.encode(notes, forKey: .notes)
        try c.encode(coordination, forKey: .coordination)
        try c.encode(proxy, forKey: .proxy)
    }
}

/// The JSON shape of ``RouteWorstCase``.
private struct WorstCaseDocument: Encodable {
    struct Wait: Encodable {
        var text: String
        var seconds: Double
        init(_ d: Duration) {
            text = DurationFormat.format(d)
            seconds = d.seconds
        }
    }

    struct Rate: Encodable {
        var requestsPerSecond: Double
        var burst: Int
        var peakRequestsInOneSecond: Double
        /// `process` or `fleet`.
        var scope: String
    }

    var attempts: Int
    var retries: Int
    var retryReason: String
    var delays: [Wait]
    var backoffDelays: [Wait]
    var retryAfterApplies: Bool
    var retryAfterCap: Wait
    var unboundedWait: Wait
    var longestWait: Wait
    var waitBound: RouteWorstCase.WaitBound
    var totalTimeout: Wait
    var rateLimit: Rate?

    init(_ w: RouteWorstCase) {
        attempts = w.attempts
        retries = w.attempts - 1
        retryReason = w.retryReason
        delays = w.delays.map(Wait.init)
        backoffDelays = w.backoffDelays.map(Wait.init)
        retryAfterApplies = w.retryAfterApplies
        retryAfterCap = Wait(w.retryAfterCap)
        unboundedWait = Wait(w.unboundedWait)
        longestWait = Wait(w.longestWait)
        waitBound = w.waitBound
        totalTimeout = Wait(w.totalTimeout)
        rateLimit = w.rateLimit.map {
            Rate(requestsPerSecond: $0.requestsPerSecond, burst: $0.burst, peakRequestsInOneSecond: Double($0.burst) + $0.requestsPerSecond,
                 scope: $0.scope.rawValue)
        }
    }

    enum CodingKeys: String, CodingKey {
        case attempts, retries, retryReason, delays, backoffDelays, retryAfterApplies, retryAfterCap, unboundedWait, longestWait, waitBound, totalTimeout, rateLimit
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(attempts, forKey: .attempts)
        try c.encode(retries, forKey: .retries)
        try c.encode(retryReason, forKey: .retryReason)
        try c.encode(delays, forKey: .delays)
        try c.encode(backoffDelays, forKey: .backoffDelays)
        try c.encode(retryAfterApplies, forKey: .retryAfterApplies)
        try c.encode(retryAfterCap, forKey: .retryAfterCap)
        try c.encode(unboundedWait, forKey: .unboundedWait)
        try c.encode(longestWait, forKey: .longestWait)
        try c.encode(waitBound, forKey: .waitBound)
        try c.encode(totalTimeout, forKey: .totalTimeout)
        try c.encode(rateLimit, forKey: .rateLimit)
    }
}
