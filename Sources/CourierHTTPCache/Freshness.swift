package import CourierCore

/// How fresh a stored response is at an instant (RFC 9111 §4.2): its freshness lifetime and current age.
///
/// Time is always a parameter: instants are seconds since the Unix epoch (UTC, on the caller's wall clock),
/// durations are seconds. `requestTime` is when the request that produced the stored response was sent,
/// `responseTime` when its response was received (§4.2.3's `request_time` and `response_time`).
package struct Freshness: Hashable, Sendable {
    /// The freshness lifetime in seconds (§4.2.1).
    package var lifetime: Double
    /// The current age in seconds (§4.2.3).
    package var currentAge: Double

    /// A freshness with the given lifetime and current age.
    package init(lifetime: Double, currentAge: Double) {
        self.lifetime = lifetime
        self.currentAge = currentAge
    }

    /// The freshness at `now` of a response with `status` and `headers`, requested at `requestTime` and
    /// received at `responseTime`. `heuristicLifetime` (the policy's `cache.ttl`) is used only when the response
    /// has no explicit freshness and its status is heuristically cacheable.
    package init(
        status: Int, headers: HTTPHeaders, requestTime: Double, responseTime: Double, now: Double,
        heuristicLifetime: Double
    ) {
        self.init(
            status: status, headers: headers, control: CacheControl(headers), requestTime: requestTime,
            responseTime: responseTime, now: now, heuristicLifetime: heuristicLifetime
        )
    }

    /// ``init(status:headers:requestTime:responseTime:now:heuristicLifetime:)`` with the response's
    /// `Cache-Control` already parsed (`control`, from `headers`).
    package init(
        status: Int, headers: HTTPHeaders, control: CacheControl, requestTime: Double, responseTime: Double,
        now: Double, heuristicLifetime: Double
    ) {
        self.init(
            lifetime: Freshness.lifetime(
                status: status, headers: headers, control: control, responseTime: responseTime,
                heuristicLifetime: heuristicLifetime
            ),
            currentAge: Freshness.currentAge(
                headers: headers, requestTime: requestTime, responseTime: responseTime, now: now
            )
        )
    }

    /// Whether the response is fresh: its lifetime exceeds its age (§4.2: `freshness_lifetime > current_age`).
    package var isFresh: Bool { lifetime > currentAge }

    /// Seconds the response has been stale (0 while it is fresh).
    package var staleness: Double { max(0, currentAge - lifetime) }

    /// Seconds of freshness left (0 once stale).
    package var remaining: Double { max(0, lifetime - currentAge) }

    /// The freshness lifetime (§4.2.1), first match wins:
    /// 1. response `max-age` (a private cache ignores `s-maxage`);
    /// 2. `Expires` minus `Date` (the response time when `Date` is missing or invalid, as RFC 9110 §6.6.1 has
    ///    a recipient record one), never negative; an invalid `Expires` such as `0` means already stale (§5.3);
    /// 3. `heuristicLifetime` for a heuristically cacheable status (§4.2.2, RFC 9110 §15.1);
    /// 4. otherwise 0.
    /// Only the first `Expires` and `Date` fields are read (§4.2.1: "the first occurrence").
    package static func lifetime(status: Int, headers: HTTPHeaders, responseTime: Double, heuristicLifetime: Double)
        -> Double
    {
        lifetime(
            status: status, headers: headers, control: CacheControl(headers), responseTime: responseTime,
            heuristicLifetime: heuristicLifetime
        )
    }

    /// ``lifetime(status:headers:responseTime:heuristicLifetime:)`` with the `Cache-Control` of `headers`
    /// already parsed.
    package static func lifetime(
        status: Int, headers: HTTPHeaders, control: CacheControl, responseTime: Double, heuristicLifetime: Double
    ) -> Double {
        if let maxAge = control.maxAge { return Double(maxAge) }
        if let expiresField = headers["Expires"] {
            guard let expires = HTTPDate.parse(expiresField) else { return 0 }
            let date = headers["Date"].flatMap(HTTPDate.parse) ?? responseTime
            return max(0, expires - date)
        }
        if Storability.heuristicallyCacheableStatuses.contains(status) { return max(0, heuristicLifetime) }
        return 0
    }

    /// The current age at `now` (§4.2.3):
    ///
    ///     apparent_age = max(0, response_time - date_value)
    ///     corrected_age_value = age_value + (response_time - request_time)
    ///     corrected_initial_age = max(apparent_age, corrected_age_value)
    ///     current_age = corrected_initial_age + (now - response_time)
    ///
    /// `Date` missing or invalid counts as `responseTime` (apparent age 0). `Age` is the first member of the
    /// first field (§5.1); an invalid one is ignored (0). A clock running backwards never makes a term negative.
    package static func currentAge(headers: HTTPHeaders, requestTime: Double, responseTime: Double, now: Double)
        -> Double
    {
        let date = headers["Date"].flatMap(HTTPDate.parse) ?? responseTime
        let apparentAge = max(0, responseTime - date)
        let ageValue = headers["Age"].flatMap(HTTPList.firstElement).flatMap(CacheControl.deltaSeconds) ?? 0
        let responseDelay = max(0, responseTime - requestTime)
        let correctedInitialAge = max(apparentAge, Double(ageValue) + responseDelay)
        let residentTime = max(0, now - responseTime)
        return correctedInitialAge + residentTime
    }
}
