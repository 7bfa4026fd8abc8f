internal import CourierCore

/// One layer of settings (the built-in defaults, a file's `defaults:`, or a service's own keys) as leaves keyed
/// by dotted key path (`retry.backoff.initial`), each with the location of the YAML node it came from.
///
/// Merging is then key by key for free: a higher layer's leaf replaces the lower one, lists replace rather than
/// append (a list is one leaf), and nested mappings merge leaf by leaf. A *switch* leaf (`retry.budget`,
/// `rate-limit`, `cache`) set to ``Value/off`` also drops every inherited leaf below it.
struct PolicyLayer: Sendable {
    enum Value: Sendable {
        case int(Int)
        case number(Double)
        case duration(Duration)
        /// `backoff.max: none`.
        case unbounded
        case bool(Bool)
        case string(String)
        case conditions([RetryPolicy.Condition])
        case methods([HTTPMethod])
        case jitter(BackoffPolicy.Jitter)
        /// An endpoint override; its scope is set at link time from its own `scope` when it has one, else from the
        /// merged `rate-limit.scope`.
        case limit(RateLimit, ownScope: ScopeSetting?)
        case scope(ScopeSetting)
        case addresses([HostAddress])
        case pins([TLSPolicy.Pin])
        case tlsVersion(TLSPolicy.Version)
        case scheme(ServicePolicy.Scheme)
        case size(Int64)
        /// A secret (`tls.client-key-password`): references, or literal text the compiler warned about.
        case secret(PolicyString)
        /// `proxy:`, one leaf: a service's replaces the defaults' whole.
        case proxy(ProxyPolicy)
        /// A switchable section is present (its mapping form).
        case on
        /// A switchable section is switched off.
        case off
    }

    /// A `scope:` a rate limit states, with where its key is (what `fleet-scope-without-coordination` points at).
    struct ScopeSetting: Sendable {
        var scope: RateLimitScope
        var keyLocation: SourceLocation
    }

    struct Entry: Sendable {
        var value: Value
        var location: SourceLocation
    }

    private(set) var entries: [String: Entry] = [:]
    /// The first one and two segments of every key (`retry`, `retry.backoff`), so ``touches(_:)`` is a look-up.
    private var sections: Set<String> = []

    mutating func set(_ path: String, _ value: Value, at location: SourceLocation) {
        entries[path] = Entry(value: value, location: location)
        noteSections(of: path)
    }

    private mutating func noteSections(of path: String) {
        let utf8 = path.utf8
        guard let first = utf8.firstIndex(of: UInt8(ascii: ".")) else { return }
        sections.insert(String(path[..<first]))
        if let second = utf8[utf8.index(after: first)...].firstIndex(of: UInt8(ascii: ".")) {
            sections.insert(String(path[..<second]))
        }
    }

    subscript(_ path: String) -> Entry? { entries[path] }

    /// This layer laid over `base`.
    func merged(over base: PolicyLayer) -> PolicyLayer {
        var result = base
        // Switches first, so an `off` here drops inherited leaves but not this layer's own.
        for (path, entry) in entries where isSwitch(entry.value) {
            if case .off = entry.value, result.sections.contains(path) {
                let prefix = path + "."
                for key in result.entries.keys where key.hasPrefix(prefix) { result.entries[key] = nil }
            }
        }
        for (path, entry) in entries { result.entries[path] = entry }
        result.sections.formUnion(sections)
        return result
    }

    /// Leaves under `prefix.` (e.g. the endpoint overrides), with the rest of the path.
    func children(of prefix: String) -> [(name: String, entry: Entry)] {
        let p = prefix + "."
        return entries.compactMap { key, entry in
            key.hasPrefix(p) ? (String(key.dropFirst(p.count)), entry) : nil
        }.sorted { $0.name < $1.name }
    }

    /// Whether any leaf at or below one of `paths` (each at most two segments deep, or a whole leaf path) is
    /// set in this layer.
    func touches(_ paths: String...) -> Bool {
        paths.contains { entries[$0] != nil || sections.contains($0) }
    }

    private func isSwitch(_ value: Value) -> Bool {
        switch value {
        case .on, .off: return true
        default: return false
        }
    }

    // MARK: - Typed reads

    func duration(_ path: String) -> Duration? {
        if case .duration(let d)? = entries[path]?.value { return d }
        return nil
    }

    func int(_ path: String) -> Int? {
        if case .int(let v)? = entries[path]?.value { return v }
        return nil
    }

    func number(_ path: String) -> Double? {
        switch entries[path]?.value {
        case .number(let v)?: return v
        case .int(let v)?: return Double(v)
        default: return nil
        }
    }

    func bool(_ path: String) -> Bool? {
        if case .bool(let v)? = entries[path]?.value { return v }
        return nil
    }

    func string(_ path: String) -> String? {
        if case .string(let v)? = entries[path]?.value { return v }
        return nil
    }

    func scope(_ path: String) -> ScopeSetting? {
        if case .scope(let s)? = entries[path]?.value { return s }
        return nil
    }

    func isOff(_ path: String) -> Bool {
        if case .off? = entries[path]?.value { return true }
        return false
    }
}
