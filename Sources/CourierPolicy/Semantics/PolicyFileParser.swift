import CourierCore

/// Reads one composed YAML tree into a ``ParsedPolicyFile``, checking every key against the
/// ``PolicyLanguage`` tables and every value against its shape, and collecting every diagnostic (it never stops
/// at the first).
struct PolicyFileParser {
    typealias Table = PolicyLanguage.Table

    /// The most attempts a retry curve may allow (it also bounds the linker's worst-case arithmetic).
    static let maxAttempts = 100

    let path: String
    let tree: YAMLTree
    let registry: AuthoriserRegistry
    private(set) var diagnostics: [Diagnostic] = []
    private var file: ParsedPolicyFile

    init(path: String, tree: YAMLTree, registry: AuthoriserRegistry) {
        self.path = path
        self.tree = tree
        self.registry = registry
        self.file = ParsedPolicyFile(path: path)
    }

    /// Parses the whole file.
    mutating func parse() -> ParsedPolicyFile {
        guard let root = tree.root, !isNull(root) else {
            report(.missingVersion, "the file is empty; a policy file starts with 'version: 1'", at: SourceLocation(file: path, line: 1, column: 1), suggestion: "add 'version: 1'")
            return file
        }
        guard let pairs = mapping(root, PolicyLanguage.root) else { return file }
        var sawVersion = false
        for (key, keyNode, value) in pairs {
            switch key {
            case "version":
                sawVersion = true
                parseVersion(value)
            case "include":
                parseIncludes(value)
            case "defaults":
                parseDefaults(value)
            case "authorisers":
                for (name, nameNode, body) in dictionary(value, what: "authorisers") {
                    parseAuthoriser(name: name, nameNode: nameNode, body)
                }
            case "services":
                for (name, nameNode, body) in dictionary(value, what: "services") {
                    parseService(name: name, nameNode: nameNode, body)
                }
            default:
                unhandled(key, keyNode)
            }
        }
        if !sawVersion {
            report(.missingVersion, "the file does not say which language version it is written in", at: location(root), suggestion: "add 'version: 1' at the top")
        }
        return file
    }

    // MARK: - Sections

    private mutating func parseVersion(_ node: Int) {
        guard let (text, _) = scalar(node), !isNull(node) else {
            report(.wrongType, "'version' must be the number 1", at: node)
            return
        }
        if let v = Int(text) {
            file.version = v
            if v != 1 {
                report(.unsupportedVersion, "language version \(v) is not supported; this compiler reads version 1", at: node, suggestion: "write 'version: 1'")
            }
        } else {
            report(.unsupportedVersion, "'\(text)' is not a language version; this compiler reads version 1", at: node, suggestion: "write 'version: 1'")
        }
    }

    private mutating func parseIncludes(_ node: Int) {
        var items: [Int] = []
        switch tree[node].kind {
        case .scalar: items = [node]
        case .sequence(let children): items = children
        case .mapping:
            report(.wrongType, "'include' takes a file name or a list of file names", at: node)
        }
        for item in items {
            guard let (text, _) = scalar(item), !text.isEmpty, !isNull(item) else {
                report(.wrongType, "an include entry must be a file name", at: item)
                continue
            }
            file.includes.append(.init(path: PolicyFileSystem.resolve(text, from: path), location: location(item)))
        }
    }

    private mutating func parseDefaults(_ node: Int) {
        guard let pairs = mapping(node, PolicyLanguage.defaults) else { return }
        var layer = PolicyLayer()
        for (key, keyNode, value) in pairs {
            switch key {
            case "timeouts": parseTimeouts(value, into: &layer)
            case "retry": parseRetry(value, into: &layer)
            case "rate-limit": parseRateLimit(value, into: &layer)
            default: unhandled(key, keyNode)
            }
        }
        file.defaults = layer
    }

    private mutating func parseTimeouts(_ node: Int, into layer: inout PolicyLayer) {
        guard let pairs = mapping(node, PolicyLanguage.timeouts) else { return }
        for (key, _, value) in pairs {
            if let d = duration(value, key: "timeouts.\(key)", positive: true) {
                layer.set("timeouts.\(key)", .duration(d), at: location(value))
            }
        }
    }

    private mutating func parseRetry(_ node: Int, into layer: inout PolicyLayer) {
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
                        report(.invalidRetryCondition, "'\(text)' is not a retry condition", at: item, suggestion: hint)
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
                        report(.invalidMethod, "'\(text)' is not an HTTP method", at: item)
                    } else if text != text.uppercased(), HTTPMethod.standard.contains(HTTPMethod(text.uppercased())) {
                        ok = false
                        report(.invalidMethod, "methods are case-sensitive and '\(text)' is not '\(text.uppercased())'", at: item, suggestion: "did you mean '\(text.uppercased())'?")
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
                    report(.invalidValue, "'\(text)' is not a valid header name", at: value, suggestion: "use a token such as 'Idempotency-Key'")
                }
            default:
                unhandled(key, keyNode)
            }
        }
    }

    private mutating func parseBackoff(_ node: Int, into layer: inout PolicyLayer) {
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
                    report(.unknownJitter, "unknown jitter '\(text)'; it is one of \(names.joined(separator: ", "))", at: value,
                           suggestion: Suggestions.didYouMean(text, in: names))
                }
            default:
                unhandled(key, keyNode)
            }
        }
    }

    private mutating func parseRateLimit(_ node: Int, into layer: inout PolicyLayer) {
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
            case "endpoints":
                for (prefix, prefixNode, body) in dictionary(value, what: "rate-limit.endpoints") {
                    guard prefix.hasPrefix("/") else {
                        report(.invalidEndpoint, "endpoint key '\(prefix)' must be a path starting with '/'", at: prefixNode,
                               suggestion: prefix.contains("/") ? "write the path only, without the host" : "write '/\(prefix)'")
                        continue
                    }
                    if prefix.contains("?") || prefix.contains("#") {
                        report(.unreachableRule, "endpoint '\(prefix)' can never match: endpoints match paths, and the query or fragment is not part of the path", at: prefixNode, suggestion: "remove everything from '?' or '#'")
                    } else if prefix.count > 1 && prefix.hasSuffix("/") {
                        report(.unreachableRule, "endpoint '\(prefix)' ends with '/', so it matches only that exact path, never the paths below it", at: prefixNode, suggestion: "write '\(prefix.dropLast())'")
                    }
                    guard let limitPairs = mapping(body, PolicyLanguage.endpointLimit) else { continue }
                    var rps: Double?
                    var burstValue: Int?
                    var ok = true
                    for (lkey, _, lvalue) in limitPairs {
                        if lkey == "requests-per-second" {
                            rps = rate(lvalue, key: "\(path).\(prefix).\(lkey)")
                            ok = ok && rps != nil
                        } else {
                            burstValue = burst(lvalue, key: "\(path).\(prefix).\(lkey)")
                            ok = ok && burstValue != nil
                        }
                    }
                    guard ok else { continue }
                    guard let r = rps else {
                        report(.invalidRate, "endpoint '\(prefix)' needs a requests-per-second", at: body, suggestion: "add 'requests-per-second: 2'")
                        continue
                    }
                    let limit = RateLimit(requestsPerSecond: r, burst: burstValue ?? defaultBurst(r))
                    layer.set("rate-limit.endpoints.\(prefix)", .limit(limit), at: location(prefixNode))
                }
            default:
                unhandled(key, keyNode)
            }
        }
    }

    private mutating func parseAuthoriser(name: String, nameNode: Int, _ node: Int) {
        guard let pairs = mapping(node, PolicyLanguage.authoriser) else { return }
        var plugin: String?
        var pluginNode: Int?
        var settingsNode: Int?
        var settingsKeyNode: Int?
        var timeout = Duration.seconds(10)
        var allowPlainHTTP = false
        for (key, keyNode, value) in pairs {
            switch key {
            case "plugin":
                if let (text, _) = scalar(value), !isNull(value) {
                    plugin = text
                    pluginNode = value
                } else {
                    report(.wrongType, "'plugin' must be a plugin type name", at: value)
                }
            case "settings":
                settingsNode = value
                settingsKeyNode = keyNode
            case "timeout":
                if let d = duration(value, key: "timeout", positive: true) { timeout = d }
            case "allow-plain-http":
                if let b = boolean(value, key: "allow-plain-http") { allowPlainHTTP = b }
            default: unhandled(key, keyNode)
            }
        }
        guard let plugin, let pluginNode else {
            if !pairs.contains(where: { $0.key == "plugin" }) {
                report(.missingSetting, "authoriser '\(name)' has no 'plugin'", at: nameNode,
                       suggestion: "add 'plugin:' with one of \(registry.typeNames.joined(separator: ", "))")
            }
            return
        }
        let descriptor = registry[plugin]
        if descriptor == nil {
            report(.unknownPlugin, "authoriser '\(name)' uses plugin type '\(plugin)', which is not registered (known: \(registry.typeNames.joined(separator: ", ")))",
                   at: pluginNode, suggestion: Suggestions.didYouMean(plugin, in: registry.typeNames))
        }
        var settings: [String: PolicyValue] = [:]
        var settingNodes: [String: Int] = [:]
        if let settingsNode, !isNull(settingsNode) {
            if case .mapping(let settingPairs) = tree[settingsNode].kind {
                for (k, v) in settingPairs {
                    guard let (key, _) = scalar(k) else {
                        report(.wrongType, "setting names must be strings", at: k)
                        continue
                    }
                    settingNodes[key] = k
                    if let descriptor {
                        guard let spec = descriptor.setting(named: key) else {
                            report(.unknownSetting, "plugin '\(plugin)' has no setting '\(key)' (it accepts \(descriptor.settings.map(\.name).joined(separator: ", ")))",
                                   at: k, suggestion: Suggestions.didYouMean(key, in: descriptor.settings.map(\.name)))
                            continue
                        }
                        if let value = setting(v, spec: spec, plugin: plugin) { settings[key] = value }
                    } else if let value = genericValue(v, depth: 0) {
                        settings[key] = value
                    }
                }
            } else {
                report(.wrongType, "'settings' must be a mapping of setting names to values", at: settingsNode)
            }
        }
        if let descriptor {
            let anchor = settingsKeyNode ?? nameNode
            for spec in descriptor.settings where spec.required && settingNodes[spec.name] == nil {
                report(.missingSetting, "plugin '\(plugin)' requires the setting '\(spec.name)' (\(spec.summary.lowercasedFirst.withoutFinalPeriod))", at: anchor,
                       suggestion: "add '\(spec.name):' under settings")
            }
            for problem in descriptor.crossCheck(settings) {
                let node = problem.setting.flatMap { settingNodes[$0] } ?? anchor
                report(.invalidSetting, problem.message, at: node)
            }
        }
        let instance = AuthoriserInstance(
            name: name, plugin: plugin, settings: settings, timeout: timeout, allowPlainHTTP: allowPlainHTTP,
            definedAt: location(nameNode))
        file.authorisers.append(.init(instance: instance, location: location(nameNode)))
    }

    private mutating func setting(_ node: Int, spec: AuthoriserTypeDescriptor.Setting, plugin: String) -> PolicyValue? {
        let what = "setting '\(spec.name)' of plugin '\(plugin)'"
        switch spec.kind {
        case .string, .secret, .url, .headerName, .choice:
            guard let (text, _) = scalar(node), !isNull(node) else {
                report(.invalidSetting, "\(what) must be a \(spec.kind)", at: node)
                return nil
            }
            let parsed: PolicyString
            switch SecretReferenceParser.parse(text, relativeTo: self.path) {
            case .success(let s): parsed = s
            case .failure(let malformed):
                report(.invalidSecretReference, malformed.message, at: node)
                return nil
            }
            if let literal = parsed.literalValue {
                switch spec.kind {
                case .secret:
                    if !literal.isEmpty {
                        report(.secretLiteral, "\(what) is a credential written into the policy file", at: node,
                               suggestion: "reference it instead: \"${env:\(spec.name.uppercased().replacingDashes)}\" or \"${file:secrets/\(spec.name)}\"")
                    }
                case .url:
                    guard let url = HTTPURL(literal) else {
                        report(.invalidSetting, "\(what) must be an absolute http(s) URL, not '\(literal)'", at: node)
                        return nil
                    }
                    if url.scheme == "http" && url.host != "localhost" && url.host != "127.0.0.1" && url.host != "::1" {
                        report(.credentialsOverHTTP, "\(what) sends credentials over plain http", at: node, suggestion: "use https")
                    }
                case .headerName:
                    guard !literal.isEmpty, literal.utf8.allSatisfy(HTTPMethod.isTokenCharacter) else {
                        report(.invalidSetting, "\(what) must be a header name, not '\(literal)'", at: node)
                        return nil
                    }
                case .choice(let options):
                    guard options.contains(literal) else {
                        report(.invalidSetting, "\(what) must be one of \(options.joined(separator: ", ")), not '\(literal)'", at: node,
                               suggestion: Suggestions.didYouMean(literal, in: options))
                        return nil
                    }
                default: break
                }
            }
            return .string(parsed)
        case .duration:
            return duration(node, key: what, positive: true).map { .duration($0) }
        case .bool:
            return boolean(node, key: what).map { .bool($0) }
        case .stringList:
            guard case .sequence(let items) = tree[node].kind else {
                report(.invalidSetting, "\(what) must be a list of strings", at: node)
                return nil
            }
            var out: [PolicyValue] = []
            for item in items {
                guard let (text, _) = scalar(item) else {
                    report(.invalidSetting, "\(what) must be a list of strings", at: item)
                    return nil
                }
                out.append(.string(PolicyString(literal: text)))
            }
            return .list(out)
        }
    }

    /// A settings value of an unknown plugin type, kept as written.
    private func genericValue(_ node: Int, depth: Int) -> PolicyValue? {
        guard depth < 16 else { return nil }
        switch tree[node].kind {
        case .scalar(let text, let plain):
            if plain, text == "true" || text == "false" { return .bool(text == "true") }
            if plain, let n = Double(text), !text.isEmpty { return .number(n) }
            return .string(PolicyString(literal: text))
        case .sequence(let items): return .list(items.compactMap { genericValue($0, depth: depth + 1) })
        case .mapping(let pairs):
            var out: [String: PolicyValue] = [:]
            for (k, v) in pairs {
                if case .scalar(let key, _) = tree[k].kind, let value = genericValue(v, depth: depth + 1) { out[key] = value }
            }
            return .map(out)
        }
    }

    private mutating func parseService(name: String, nameNode: Int, _ node: Int) {
        var service = ParsedPolicyFile.Service(name: name, location: location(nameNode), hosts: [], hostsLocation: nil, layer: PolicyLayer())
        guard let pairs = mapping(node, PolicyLanguage.service) else {
            file.services.append(service)
            return
        }
        var layer = PolicyLayer()
        for (key, keyNode, value) in pairs {
            let at = location(value)
            switch key {
            case "hosts":
                service.hostsLocation = location(keyNode)
                guard let items = list(value, key: "hosts") else {
                    service.hostsInvalid = true
                    continue
                }
                for item in items {
                    guard let (text, _) = scalar(item), !isNull(item) else {
                        report(.wrongType, "a host must be a string such as 'api.example.com' or '*.example.com'", at: item)
                        service.hostsInvalid = true
                        continue
                    }
                    switch HostSyntax.pattern(text) {
                    case .success(let pattern): service.hosts.append((pattern, location(item)))
                    case .failure(let problem):
                        service.hostsInvalid = true
                        report(.invalidHostPattern, "'\(text)' is not a valid host pattern: \(problem.reason)", at: item)
                    }
                }
            case "scheme":
                guard let (text, _) = scalar(value), !isNull(value) else {
                    report(.wrongType, "'scheme' must be https or http", at: value)
                    continue
                }
                if let scheme = ServicePolicy.Scheme(rawValue: text) {
                    layer.set("scheme", .scheme(scheme), at: at)
                } else {
                    report(.invalidValue, "scheme '\(text)' is not https or http", at: value,
                           suggestion: Suggestions.didYouMean(text, in: ["https", "http"]))
                }
            case "authoriser":
                guard let (text, _) = scalar(value), !isNull(value), !text.isEmpty else {
                    report(.wrongType, "'authoriser' must be the name of an authoriser", at: value)
                    continue
                }
                layer.set("authoriser", .string(text), at: at)
            case "rate-limit": parseRateLimit(value, into: &layer)
            case "retry": parseRetry(value, into: &layer)
            case "timeouts": parseTimeouts(value, into: &layer)
            case "fallbacks":
                for (host, hostNode, addresses) in dictionary(value, what: "fallbacks") {
                    let pattern: HostPattern
                    switch HostSyntax.pattern(host) {
                    case .failure(let problem):
                        report(.invalidHostPattern, "fallbacks key '\(host)' is not a valid host: \(problem.reason)", at: hostNode)
                        continue
                    case .success(let p) where p.isWildcard:
                        report(.unreachableRule, "fallbacks for '\(host)' can never apply: fallbacks are looked up by the exact host of a request", at: hostNode,
                               suggestion: "list each exact host the service claims")
                        continue
                    case .success(let p): pattern = p
                    }
                    var out: [HostAddress] = []
                    var ok = true
                    for item in list(addresses, key: "fallbacks.\(host)") ?? [] {
                        guard let (text, _) = scalar(item), let address = HostSyntax.address(text) else {
                            report(.invalidFallback, "fallback '\(scalar(item)?.0 ?? "")' is not a host, host:port or IP address", at: item)
                            ok = false
                            continue
                        }
                        out.append(address)
                    }
                    if ok, list(addresses, key: nil) != nil {
                        layer.set("fallbacks.\(pattern.name)", .addresses(out), at: location(hostNode))
                    }
                }
            case "tls": parseTLS(value, into: &layer)
            case "cache": parseCache(value, into: &layer)
            default: unhandled(key, keyNode)
            }
        }
        service.layer = layer
        file.services.append(service)
    }

    private mutating func parseTLS(_ node: Int, into layer: inout PolicyLayer) {
        guard let pairs = mapping(node, PolicyLanguage.tls) else { return }
        for (key, keyNode, value) in pairs {
            let path = "tls.\(key)"
            switch key {
            case "pins":
                var pins: [TLSPolicy.Pin] = []
                var ok = true
                for item in list(value, key: path) ?? [] {
                    guard let (text, _) = scalar(item) else {
                        report(.invalidPin, "a pin must be a string 'sha256/<base64>'", at: item)
                        ok = false
                        continue
                    }
                    guard text.hasPrefix("sha256/") else {
                        report(.invalidPin, "pin '\(text)' must start with 'sha256/'", at: item, suggestion: "pins are 'sha256/' followed by the base64 of the SHA-256 of the certificate's SubjectPublicKeyInfo")
                        ok = false
                        continue
                    }
                    guard let bytes = Base64.decode(String(text.dropFirst(7))), bytes.count == 32 else {
                        report(.invalidPin, "pin '\(text)' is not the base64 of a 32-byte SHA-256 digest", at: item,
                               suggestion: "compute it with: openssl x509 -pubkey -noout -in cert.pem | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64")
                        ok = false
                        continue
                    }
                    pins.append(TLSPolicy.Pin(sha256: bytes))
                }
                if ok, list(value, key: nil) != nil { layer.set(path, .pins(pins), at: location(value)) }
            case "ca-file":
                guard let (text, _) = scalar(value), !isNull(value), !text.isEmpty else {
                    report(.wrongType, "tls.ca-file must be a file path", at: value)
                    continue
                }
                let absolute = PolicyFileSystem.absolute(PolicyFileSystem.resolve(text, from: self.path))
                if PolicyFileSystem.isRegularFile(absolute) {
                    layer.set(path, .string(absolute), at: location(value))
                } else {
                    report(.caFileMissing, "tls.ca-file '\(text)' does not exist (looked for \(absolute))", at: value, suggestion: "the path is relative to the file that says it")
                }
            case "min-version":
                guard let (text, _) = scalar(value), !isNull(value) else {
                    report(.invalidTLSVersion, "tls.min-version must be \"1.2\" or \"1.3\"", at: value)
                    continue
                }
                if let version = TLSPolicy.Version(rawValue: text) {
                    layer.set(path, .tlsVersion(version), at: location(value))
                } else if ["1.0", "1.1", "1"].contains(text) {
                    report(.invalidTLSVersion, "TLS \(text) is obsolete (RFC 8996) and not supported", at: value, suggestion: "write \"1.2\" or \"1.3\"")
                } else {
                    report(.invalidTLSVersion, "'\(text)' is not a TLS version Courier supports", at: value, suggestion: "write \"1.2\" or \"1.3\"")
                }
            default: unhandled(key, keyNode)
            }
        }
    }

    private mutating func parseCache(_ node: Int, into layer: inout PolicyLayer) {
        if isOffSwitch(node) {
            layer.set("cache", .off, at: location(node))
            return
        }
        guard let pairs = mapping(node, PolicyLanguage.cache) else { return }
        layer.set("cache", .on, at: location(node))
        for (key, keyNode, value) in pairs {
            let path = "cache.\(key)"
            switch key {
            case "ttl":
                if let d = duration(value, key: path, positive: true) { layer.set(path, .duration(d), at: location(value)) }
            case "max-size":
                guard let (text, plain) = scalar(value), !isNull(value) else {
                    report(.wrongType, "cache.max-size must be a size such as 10MiB", at: value)
                    continue
                }
                if let bytes = DurationFormat.parseSize(text), bytes > 0 {
                    if plain, Int(text) != nil {
                        report(.wrongType, "cache.max-size is a bare number; write a unit, e.g. '\(text)B' or '10MiB'", at: value)
                    } else {
                        layer.set(path, .size(bytes), at: location(value))
                    }
                } else {
                    report(.invalidSize, "'\(text)' is not a size", at: value, suggestion: "write a number and a unit without a space: 512KiB, 10MiB, 1GiB")
                }
            default: unhandled(key, keyNode)
            }
        }
    }

    // MARK: - Node helpers

    private func location(_ node: Int) -> SourceLocation {
        SourceLocation(file: path, line: tree[node].line, column: tree[node].column)
    }

    private mutating func report(_ rule: PolicyRule, _ message: String, at node: Int, suggestion: String? = nil) {
        report(rule, message, at: location(node), suggestion: suggestion)
    }

    private mutating func report(_ rule: PolicyRule, _ message: String, at location: SourceLocation, suggestion: String? = nil) {
        diagnostics.append(Diagnostic(rule.severity, rule: rule.id, message: message, suggestion: suggestion, at: location))
    }

    private func scalar(_ node: Int) -> (String, Bool)? {
        if case .scalar(let text, let plain) = tree[node].kind { return (text, plain) }
        return nil
    }

    private func isNull(_ node: Int) -> Bool {
        guard case .scalar(let text, let plain) = tree[node].kind, plain else { return false }
        return text.isEmpty || text == "~" || text == "null" || text == "Null" || text == "NULL"
    }

    private func isOffSwitch(_ node: Int) -> Bool {
        guard case .scalar(let text, let plain) = tree[node].kind, plain else { return false }
        return text == "off" || text == "false"
    }

    private func kindName(_ node: Int) -> String {
        switch tree[node].kind {
        case .scalar(let text, _): return isNull(node) ? "nothing" : "'\(text.count > 40 ? String(text.prefix(40)) + "..." : text)'"
        case .sequence: return "a list"
        case .mapping: return "a mapping"
        }
    }

    /// The pairs of a mapping whose keys are all in `table`; reports wrong types and unknown keys. A null value
    /// counts as an empty mapping.
    private mutating func mapping(_ node: Int, _ table: Table) -> [(key: String, keyNode: Int, value: Int)]? {
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
    private mutating func dictionary(_ node: Int, what: String) -> [(key: String, keyNode: Int, value: Int)] {
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
    private mutating func list(_ node: Int, key: String?) -> [Int]? {
        if case .sequence(let items) = tree[node].kind { return items }
        if let key {
            report(.wrongType, "'\(key)' must be a list, found \(kindName(node))", at: node, suggestion: "write [a, b] or one '- item' per line")
        }
        return nil
    }

    private mutating func duration(_ node: Int, key: String, positive: Bool) -> Duration? {
        guard let (text, plain) = scalar(node), !isNull(node) else {
            report(.wrongType, "'\(key)' must be a duration such as 5s, found \(kindName(node))", at: node)
            return nil
        }
        if plain, Double(text) != nil {
            report(.wrongType, "'\(key)' is a bare number, but a duration needs a unit", at: node, suggestion: "write \(text)s (or \(text)ms)")
            return nil
        }
        guard let d = DurationFormat.parse(text) else {
            report(.invalidDuration, "'\(text)' is not a duration", at: node, suggestion: "write a number and a unit: 250ms, 5s, 2m, 1h (up to 100 days)")
            return nil
        }
        if positive && d <= .zero {
            report(.invalidDuration, "'\(key)' must be longer than zero", at: node)
            return nil
        }
        return d
    }

    private mutating func integer(_ node: Int, key: String) -> Int? {
        guard let (text, plain) = scalar(node), plain, let n = Int(text) else {
            report(.wrongType, "'\(key)' must be a whole number, found \(kindName(node))", at: node)
            return nil
        }
        return n
    }

    private mutating func number(_ node: Int, key: String) -> Double? {
        guard let (text, plain) = scalar(node), plain, let n = Double(text), n.isFinite else {
            report(.wrongType, "'\(key)' must be a number, found \(kindName(node))", at: node)
            return nil
        }
        return n
    }

    private mutating func boolean(_ node: Int, key: String) -> Bool? {
        guard let (text, plain) = scalar(node), plain, text == "true" || text == "false" else {
            report(.wrongType, "'\(key)' must be true or false, found \(kindName(node))", at: node)
            return nil
        }
        return text == "true"
    }

    private mutating func rate(_ node: Int, key: String) -> Double? {
        guard let (text, plain) = scalar(node), !isNull(node) else {
            report(.wrongType, "'\(key)' must be a number of requests per second", at: node)
            return nil
        }
        guard plain, let n = Double(text), n.isFinite, n > 0, n <= 1_000_000 else {
            report(.invalidRate, "'\(text)' is not a valid rate; '\(key)' must be a positive number of requests per second", at: node,
                   suggestion: "e.g. 10, or 0.5 for one request every two seconds")
            return nil
        }
        return n
    }

    private mutating func burst(_ node: Int, key: String) -> Int? {
        guard let (text, plain) = scalar(node), plain, let n = Int(text), n >= 1, n <= 1_000_000 else {
            report(.invalidRate, "'\(key)' must be a whole number of requests, at least 1", at: node)
            return nil
        }
        return n
    }

    private mutating func unhandled(_ key: String, _ node: Int) {
        // Every key in the tables has a case above; a test compiles a file using every key.
        report(.unknownKey, "the compiler does not handle key '\(key)' here (this is a bug in Courier)", at: node)
    }

    private func format(_ n: Double) -> String {
        n == n.rounded() && abs(n) < 1e15 ? String(Int(n)) : String(n)
    }
}

/// The built-in burst for a rate: max(1, ceil(rps)).
func defaultBurst(_ rps: Double) -> Int {
    let c = rps.rounded(.up)
    return c >= 1 ? (c < 1e9 ? Int(c) : 1_000_000_000) : 1
}

extension String {
    var lowercasedFirst: String {
        guard let first else { return self }
        return first.lowercased() + dropFirst()
    }

    var replacingDashes: String { String(map { $0 == "-" ? "_" : $0 }) }

    /// At most 60 characters, for quoting user text in messages.
    var abbreviated: String { count > 60 ? String(prefix(57)) + "..." : self }

    var withoutFinalPeriod: String { hasSuffix(".") ? String(dropLast()) : self }
}
