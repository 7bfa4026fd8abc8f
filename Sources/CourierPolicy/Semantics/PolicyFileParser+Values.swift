internal import CourierCore

/// Typed reads of YAML nodes with diagnostics: every value check the language needs goes through these.
extension PolicyFileParser {
    // MARK: - Node helpers

    func location(_ node: Int) -> SourceLocation {
        SourceLocation(file: path, line: tree[node].line, column: tree[node].column)
    }

    mutating func report(_ rule: PolicyRule, _ message: String, at node: Int, suggestion: String? = nil) {
        report(rule, message, at: location(node), suggestion: suggestion)
    }

    mutating func report(_ rule: PolicyRule, _ message: String, at location: SourceLocation, suggestion: String? = nil) {
        diagnostics.append(Diagnostic(rule.severity, rule: rule.id, message: message, suggestion: suggestion, at: location))
    }

    func scalar(_ node: Int) -> (String, Bool)? {
        if case .scalar(let text, let plain) = tree[node].kind { return (text, plain) }
        return nil
    }

    func isNull(_ node: Int) -> Bool {
        guard case .scalar(let text, let plain) = tree[node].kind, plain else { return false }
        return text.isEmpty || text == "~" || text == "null" || text == "Null" || text == "NULL"
    }

    func isOffSwitch(_ node: Int) -> Bool {
        guard case .scalar(let text, let plain) = tree[node].kind, plain else { return false }
        return text == "off" || text == "false"
    }

    func kindName(_ node: Int) -> String {
        switch tree[node].kind {
        case .scalar(let text, _): return isNull(node) ? "nothing" : "'\(text.abbreviated(to: 43))'"
        case .sequence: return "a list"
        case .mapping: return "a mapping"
        }
    }

    /// The pairs of a mapping whose keys are all in `table`; reports wrong types and unknown keys. A null value
    /// counts as an empty mapping.
    mutating func mapping(_ node: Int, _ table: Table) -> [(key: String, keyNode: Int, value: Int)]? {
        if isNull(node) { return [] }
        guard case .mapping(let pairs) = tree[node].kind else {
            report(.wrongType, "\(table.name) must be a mapping, found \(kindName(node))", at: node,
                   suggestion: "keys of \(table.name): \(table.keyNames.joined(separator: ", "))")
            return nil
        }
        var out: [(String, Int, Int)] = []
        for (k, v) in pairs {
            guard let (key, _) = scalar(k) else {
                report(.wrongType, "keys must be plain names, found \(kindName(k))", at: k)
                continue
            }
            guard table.key(key) != nil else {
                let suggestion = Suggestions.didYouMean(key, in: table.keyNames)
                    ?? "\(table.name) accepts \(table.keyNames.joined(separator: ", "))"
                report(.unknownKey, "unknown key '\(key.abbreviated)' in \(table.name)", at: k, suggestion: suggestion)
                continue
            }
            out.append((key, k, v))
        }
        return out
    }

    /// Entries of a free-keyed mapping (services, authorisers, endpoints, fallbacks).
    mutating func dictionary(_ node: Int, what: String) -> [(key: String, keyNode: Int, value: Int)] {
        if isNull(node) { return [] }
        guard case .mapping(let pairs) = tree[node].kind else {
            report(.wrongType, "'\(what)' must be a mapping, found \(kindName(node))", at: node)
            return []
        }
        var out: [(String, Int, Int)] = []
        for (k, v) in pairs {
            guard let (key, _) = scalar(k), !key.isEmpty else {
                report(.wrongType, "names under '\(what)' must be non-empty strings", at: k)
                continue
            }
            out.append((key, k, v))
        }
        return out
    }

    /// The items of a list; with `key` nil it only answers whether the node is a list, reporting nothing.
    mutating func list(_ node: Int, key: String?) -> [Int]? {
        if case .sequence(let items) = tree[node].kind { return items }
        if let key {
            report(.wrongType, "'\(key)' must be a list, found \(kindName(node))", at: node, suggestion: "write [a, b] or one '- item' per line")
        }
        return nil
    }

    mutating func duration(_ node: Int, key: String, positive: Bool) -> Duration? {
        guard let (text, plain) = scalar(node), !isNull(node) else {
            report(.wrongType, "'\(key)' must be a duration such as 5s, found \(kindName(node))", at: node)
            return nil
        }
        if plain, Double(text) != nil {
            report(.wrongType, "'\(key)' is a bare number, but a duration needs a unit", at: node, suggestion: "write \(text.abbreviated)s (or \(text.abbreviated)ms)")
            return nil
        }
        guard let d = DurationFormat.parse(text) else {
            report(.invalidDuration, "'\(text.abbreviated)' is not a duration", at: node, suggestion: "write a number and a unit: 250ms, 5s, 2m, 1h (up to 100 days)")
            return nil
        }
        if positive && d <= .zero {
            report(.invalidDuration, "'\(key)' must be longer than zero", at: node)
            return nil
        }
        return d
    }

    mutating func integer(_ node: Int, key: String) -> Int? {
        guard let (text, plain) = scalar(node), plain, let n = Int(text) else {
            report(.wrongType, "'\(key)' must be a whole number, found \(kindName(node))", at: node)
            return nil
        }
        return n
    }

    mutating func number(_ node: Int, key: String) -> Double? {
        guard let (text, plain) = scalar(node), plain, let n = Double(text), n.isFinite else {
            report(.wrongType, "'\(key)' must be a number, found \(kindName(node))", at: node)
            return nil
        }
        return n
    }

    mutating func boolean(_ node: Int, key: String) -> Bool? {
        guard let (text, plain) = scalar(node), plain, text == "true" || text == "false" else {
            report(.wrongType, "'\(key)' must be true or false, found \(kindName(node))", at: node)
            return nil
        }
        return text == "true"
    }

    mutating func rate(_ node: Int, key: String) -> Double? {
        guard let (text, plain) = scalar(node), !isNull(node) else {
            report(.wrongType, "'\(key)' must be a number of requests per second", at: node)
            return nil
        }
        guard plain, let n = Double(text), n.isFinite, n > 0, n <= 1_000_000 else {
            report(.invalidRate, "'\(text.abbreviated)' is not a valid rate; '\(key)' must be a positive number of requests per second", at: node,
                   suggestion: "e.g. 10, or 0.5 for one request every two seconds")
            return nil
        }
        return n
    }

    mutating func burst(_ node: Int, key: String) -> Int? {
        guard let (text, plain) = scalar(node), plain, let n = Int(text), n >= 1, n <= 1_000_000 else {
            report(.invalidRate, "'\(key)' must be a whole number of requests, at least 1", at: node)
            return nil
        }
        return n
    }

    mutating func unhandled(_ key: String, _ node: Int) {
        // Every key in the tables has a case above; a test compiles a file using every key.
        report(.unknownKey, "the compiler does not handle key '\(key)' here (this is a bug in Courier)", at: node)
    }

    func format(_ n: Double) -> String {
        n == n.rounded() && abs(n) < 1e15 ? String(Int(n)) : String(n)
    }
}
