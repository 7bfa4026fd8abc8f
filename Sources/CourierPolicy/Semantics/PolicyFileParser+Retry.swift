internal import CourierCore

/// `timeouts:` and `retry:` (with `backoff:` and `budget:`), in defaults and services.
extension PolicyFileParser {
    mutating func parseTimeouts(_ node: Int, into layer: inout PolicyLayer) {
        guard let pairs = mapping(node, PolicyLanguage.timeouts) else { return }
        for (key, _, value) in pairs {
            if let d = duration(value, key: "timeouts.\(key)", positive: true) {
                layer.set("timeouts.\(key)", .duration(d), at: location(value))
            }
        }
    }

    mutating func parseRetry(_ node: Int, into layer: inout PolicyLayer) {
        guard let pairs = mapping(node, PolicyLanguage.retry) else { return }
        for (key, keyNode, value) in pairs {
            let path = "retry.\(key)"
            let at = location(value)
            switch key {
            case "max-attempts":
                guard let n = integer(value, key: path) else { continue }
                if n < 1 {
                    report(.invalidMaxAttempts, "retry.max-attempts is \(n), but it counts every attempt including the first, so it must be at least 1", at: value, suggestion: "write 1 to disable retries")
                } else if n > PolicyFileParser.maxAttempts {
                    report(.invalidMaxAttempts, "retry.max-attempts is \(n); more than \(PolicyFileParser.maxAttempts) attempts is not a retry policy but a flood", at: value, suggestion: "a handful of attempts is enough; use the retry budget and back-off for the rest")
                } else {
                    layer.set(path, .int(n), at: at)
                }
            case "on":
                var conditions: [RetryPolicy.Condition] = []
                var ok = true
                for item in list(value, key: path) ?? [] {
                    guard let (text, _) = scalar(item) else {
                        report(.wrongType, "a retry.on entry must be a condition or a status code", at: item)
                        ok = false
                        continue
                    }
                    if let c = RetryPolicy.Condition(token: text) {
                        conditions.append(c)
                    } else {
                        ok = false
                        let hint = Suggestions.didYouMean(text, in: RetryPolicy.Condition.tokens)
                            ?? "use connect-error, timeout, connection-lost or a status code from 100 to 599"
                        report(.invalidRetryCondition, "'\(text.abbreviated)' is not a retry condition", at: item, suggestion: hint)
                    }
                }
                if ok && list(value, key: nil) != nil { layer.set(path, .conditions(conditions), at: at) }
            case "methods":
                var methods: [HTTPMethod] = []
                var ok = true
                for item in list(value, key: path) ?? [] {
                    guard let (text, _) = scalar(item) else {
                        report(.wrongType, "a retry.methods entry must be a method name", at: item)
                        ok = false
                        continue
                    }
                    let method = HTTPMethod(text)
                    if !method.isValidToken {
                        ok = false
                        report(.invalidMethod, "'\(text.abbreviated)' is not an HTTP method", at: item)
                    } else if text != text.uppercased(), HTTPMethod.standard.contains(HTTPMethod(text.uppercased())) {
                        ok = false
                        report(.invalidMethod, "methods are case-sensitive and '\(text.abbreviated)' is not '\(text.uppercased())'", at: item, suggestion: "did you mean '\(text.uppercased())'?")
                    } else {
                        methods.append(method)
                    }
                }
                if ok && list(value, key: nil) != nil { layer.set(path, .methods(methods), at: at) }
            case "backoff":
                parseBackoff(value, into: &layer)
            case "respect-retry-after":
                if let b = boolean(value, key: path) { layer.set(path, .bool(b), at: at) }
            case "retry-after-cap":
                if let d = duration(value, key: path, positive: true) { layer.set(path, .duration(d), at: at) }
            case "budget":
                if isOffSwitch(value) {
                    layer.set(path, .off, at: at)
                    continue
                }
                guard let budget = mapping(value, PolicyLanguage.budget) else { continue }
                layer.set(path, .on, at: at)
                for (bkey, _, bvalue) in budget {
                    let bpath = "retry.budget.\(bkey)"
                    guard let n = number(bvalue, key: bpath) else { continue }
                    if bkey == "ratio" && !(0...1).contains(n) {
                        report(.invalidValue, "retry.budget.ratio is \(format(n)), but it is a share between 0 and 1", at: bvalue, suggestion: "0.2 allows 20% retries on top of the traffic")
                    } else if n < 0 {
                        report(.invalidValue, "\(bpath) must not be negative", at: bvalue)
                    } else {
                        layer.set(bpath, .number(n), at: location(bvalue))
                    }
                }
            case "idempotency-key":
                guard let (text, _) = scalar(value), !isNull(value) else {
                    report(.wrongType, "retry.idempotency-key must be a header name", at: value)
                    continue
                }
                if !text.isEmpty && text.utf8.allSatisfy(HTTPMethod.isTokenCharacter) {
                    layer.set(path, .string(text), at: at)
                } else {
                    report(.invalidValue, "'\(text.abbreviated)' is not a valid header name", at: value, suggestion: "use a token such as 'Idempotency-Key'")
                }
            default:
                unhandled(key, keyNode)
            }
        }
    }

    mutating func parseBackoff(_ node: Int, into layer: inout PolicyLayer) {
        guard let pairs = mapping(node, PolicyLanguage.backoff) else { return }
        for (key, keyNode, value) in pairs {
            let path = "retry.backoff.\(key)"
            let at = location(value)
            switch key {
            case "initial":
                if let d = duration(value, key: path, positive: false) { layer.set(path, .duration(d), at: at) }
            case "max":
                if let (text, plain) = scalar(value), plain, text == "none" {
                    layer.set(path, .unbounded, at: at)
                } else if let d = duration(value, key: path, positive: true) {
                    layer.set(path, .duration(d), at: at)
                }
            case "multiplier":
                guard let n = number(value, key: path) else { continue }
                if n < 1 {
                    report(.invalidValue, "retry.backoff.multiplier is \(format(n)), but delays must not shrink; use at least 1", at: value, suggestion: "1 keeps the delay constant, 2 doubles it")
                } else if n > 100 {
                    report(.invalidValue, "retry.backoff.multiplier \(format(n)) is absurd; delays would hit the cap at once", at: value, suggestion: "use a value between 1 and 10")
                } else {
                    layer.set(path, .number(n), at: at)
                }
            case "jitter":
                guard let (text, _) = scalar(value), !isNull(value) else {
                    report(.wrongType, "retry.backoff.jitter must be one of none, full, equal, decorrelated", at: value)
                    continue
                }
                if let j = BackoffPolicy.Jitter(rawValue: text) {
                    layer.set(path, .jitter(j), at: at)
                } else {
                    let names = BackoffPolicy.Jitter.allCases.map(\.rawValue)
                    report(.unknownJitter, "unknown jitter '\(text.abbreviated)'; it is one of \(names.joined(separator: ", "))", at: value,
                           suggestion: Suggestions.didYouMean(text, in: names))
                }
            default:
                unhandled(key, keyNode)
            }
        }
    }
}
