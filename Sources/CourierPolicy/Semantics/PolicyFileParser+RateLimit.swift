internal import CourierCore

/// `rate-limit:` with its endpoint overrides, in defaults and services.
extension PolicyFileParser {
    mutating func parseRateLimit(_ node: Int, into layer: inout PolicyLayer) {
        if isOffSwitch(node) {
            layer.set("rate-limit", .off, at: location(node))
            return
        }
        guard let pairs = mapping(node, PolicyLanguage.rateLimit) else { return }
        layer.set("rate-limit", .on, at: location(node))
        for (key, keyNode, value) in pairs {
            let path = "rate-limit.\(key)"
            switch key {
            case "requests-per-second":
                if let r = rate(value, key: path) { layer.set(path, .number(r), at: location(value)) }
            case "burst":
                if let b = burst(value, key: path) { layer.set(path, .int(b), at: location(value)) }
            case "scope":
                if let scope = scope(value, key: path, keyNode: keyNode) { layer.set(path, .scope(scope), at: location(value)) }
            case "endpoints":
                for (prefix, prefixNode, body) in dictionary(value, what: "rate-limit.endpoints") {
                    guard prefix.hasPrefix("/") else {
                        report(.invalidEndpoint, "endpoint key '\(prefix.abbreviated)' must be a path starting with '/'", at: prefixNode,
                               suggestion: prefix.contains("/") ? "write the path only, without the host" : "write '/\(prefix.abbreviated)'")
                        continue
                    }
                    if prefix.contains("?") || prefix.contains("#") {
                        report(.unreachableRule, "endpoint '\(prefix.abbreviated)' can never match: endpoints match paths, and the query or fragment is not part of the path", at: prefixNode, suggestion: "remove everything from '?' or '#'")
                    } else if prefix == "/" {
                        report(.unreachableRule, "endpoint '/' matches only the root path itself, not every path", at: prefixNode, suggestion: "to limit every path, set requests-per-second on rate-limit itself")
                    } else if prefix.count > 1 && prefix.hasSuffix("/") {
                        report(.unreachableRule, "endpoint '\(prefix.abbreviated)' ends with '/', so it matches only that exact path, never the paths below it", at: prefixNode, suggestion: "write '\(prefix.dropLast().abbreviated)'")
                    }
                    guard let limitPairs = mapping(body, PolicyLanguage.endpointLimit) else { continue }
                    var rps: Double?
                    var burstValue: Int?
                    var ownScope: PolicyLayer.ScopeSetting?
                    var ok = true
                    for (lkey, lkeyNode, lvalue) in limitPairs {
                        let lpath = "\(path).\(prefix.abbreviated).\(lkey)"
                        switch lkey {
                        case "requests-per-second":
                            rps = rate(lvalue, key: lpath)
                            ok = ok && rps != nil
                        case "burst":
                            burstValue = burst(lvalue, key: lpath)
                            ok = ok && burstValue != nil
                        case "scope":
                            ownScope = scope(lvalue, key: lpath, keyNode: lkeyNode)
                            ok = ok && ownScope != nil
                        default:
                            unhandled(lkey, lkeyNode)
                        }
                    }
                    guard ok else { continue }
                    guard let r = rps else {
                        report(.invalidRate, "endpoint '\(prefix.abbreviated)' needs a requests-per-second", at: body, suggestion: "add 'requests-per-second: 2'")
                        continue
                    }
                    let limit = RateLimit(requestsPerSecond: r, burst: burstValue ?? defaultBurst(r))
                    layer.set("rate-limit.endpoints.\(prefix)", .limit(limit, ownScope: ownScope), at: location(prefixNode))
                }
            default:
                unhandled(key, keyNode)
            }
        }
    }

    /// `scope: process | fleet`, with where its key is.
    mutating func scope(_ node: Int, key: String, keyNode: Int) -> PolicyLayer.ScopeSetting? {
        guard let (text, _) = scalar(node), !isNull(node) else {
            report(.wrongType, "'\(key)' must be process or fleet, found \(kindName(node))", at: node)
            return nil
        }
        guard let scope = RateLimitScope(rawValue: text) else {
            report(.invalidValue, "'\(key)' is '\(text.abbreviated)', not process or fleet", at: node,
                   suggestion: Suggestions.didYouMean(text, in: ["process", "fleet"]) ?? "process: each instance keeps its own bucket; fleet: the instances share one through coordination")
            return nil
        }
        return PolicyLayer.ScopeSetting(scope: scope, keyLocation: location(keyNode))
    }
}
