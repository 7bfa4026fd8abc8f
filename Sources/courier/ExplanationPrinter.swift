internal import CourierCore
internal import CourierLint

/// The text layout of `courier explain`: a header, the effective values in aligned columns with their
/// origins, and the worst case.
enum ExplanationPrinter {
    static func text(_ e: RouteExplanation) -> String {
        var out = "\(e.method) \(e.url)\n"
        if let service = e.service {
            out += "service:      \(service)"
            if let at = e.serviceDefinedAt { out += " (\(at.file):\(at.line))" }
            out += "\n"
        } else {
            out += "service:      none (defaults)\n"
        }
        out += "match:        \(e.match.rawValue)\(e.pattern.map { " '\($0)'" } ?? "")\n"
        out += "why:          \(e.reason)\n"
        out += "endpoint key: \(e.endpointKey)\n"
        out += "proxy:        \(e.proxy.proxy ?? "none, direct") (\(e.proxy.reason))\n"

        out += "\neffective values:\n"
        let keyWidth = e.values.map(\.key.count).max() ?? 0
        let valueWidth = min(48, e.values.map(\.value.count).max() ?? 0)
        for v in e.values {
            out += "  " + pad(v.key, keyWidth) + "  " + pad(v.value, valueWidth) + "  " + v.origin.description + "\n"
        }

        let w = e.worstCase
        out += "\nworst case:\n"
        out += "  attempts:     \(w.attempts) (\(w.attempts - 1) \(w.attempts == 2 ? "retry" : "retries")); \(w.retryReason)\n"
        out += "  longest wait: \(w.attempts > 1 ? DurationFormat.format(w.longestWait) : "none") between attempts; "
            + waitExplanation(w) + "\n"
        out += "  whole request ends by timeouts.total = \(DurationFormat.format(w.totalTimeout))\n"
        if let limit = w.rateLimit {
            let whose = limit.scope == .fleet ? "for the whole fleet" : "in each process"
            out += "  requests/s:   at most \(number(limit.requestsPerSecond)) per second sustained on \(e.endpointKey) \(whose), "
                + "\(number(Double(limit.burst) + limit.requestsPerSecond)) within one second after a quiet period "
                + "(burst \(limit.burst))\n"
        } else {
            out += "  requests/s:   unlimited (no rate limit applies to \(e.endpointKey))\n"
        }
        if let c = e.coordination {
            out += "\nshared with the fleet through \(c.backend) (key prefix \(c.keyPrefix)):\n"
            if c.sharesRateLimit {
                out += "  rate limit:   one budget and one Retry-After pause on \(e.endpointKey) for every instance; "
                    + "while Redis is unreachable, \(c.whileUnavailable)\n"
            }
            if let name = c.sharedTokensAuthoriser {
                out += "  tokens:       authoriser '\(name)' shares its tokens: one instance refreshes, the others reuse the result\n"
            }
        }
        if !e.notes.isEmpty {
            out += "\nnotes:\n"
            for note in e.notes { out += "  - \(note)\n" }
        }
        return out
    }

    private static func waitExplanation(_ w: RouteWorstCase) -> String {
        func sum(_ delays: [Duration]) -> String {
            let total = DurationFormat.format(delays.reduce(.zero, +))
            return delays.count == 1 ? total : delays.map(DurationFormat.format).joined(separator: " + ") + " = " + total
        }
        let curve = "the back-off curve waits at most " + sum(w.backoffDelays)
        let retryAfter = "a Retry-After of up to \(DurationFormat.format(w.retryAfterCap)) may replace each delay ("
            + sum(w.delays) + ")"
        switch w.waitBound {
        case .noRetries:
            return "the request is not retried"
        case .backoff:
            return "bounded by the back-off curve: " + curve
                + (w.retryAfterApplies ? " (Retry-After is capped lower)" : "")
        case .retryAfterCap:
            return "bounded by the Retry-After cap: " + retryAfter
        case .totalTimeout:
            return "bounded by timeouts.total: " + curve + (w.retryAfterApplies ? ", and " + retryAfter : "")
        }
    }

    private static func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
    }

    private static func number(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        return String(value)
    }
}
