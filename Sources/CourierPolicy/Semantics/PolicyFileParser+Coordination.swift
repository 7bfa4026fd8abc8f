internal import CourierCore

/// `coordination:`: the Redis backend a fleet shares limits and tokens through, and `on-unavailable`.
extension PolicyFileParser {
    mutating func parseCoordination(_ node: Int, keyNode: Int) {
        let at = location(keyNode)
        guard let pairs = mapping(node, PolicyLanguage.coordination) else {
            file.coordination = .init(policy: nil, location: at, hasTokenKey: false)
            return
        }
        var redis: (policy: RedisCoordination?, hasTokenKey: Bool)?
        var onUnavailable = CoordinationPolicy.Unavailable.local
        var origins: [String: SourceLocation] = [:]
        for (key, keyNode, value) in pairs {
            switch key {
            case "redis":
                redis = parseRedis(value, keyNode: keyNode, origins: &origins)
            case "on-unavailable":
                let modes = ["local", "open", "closed"]
                guard let (text, _) = scalar(value), !isNull(value) else {
                    report(.wrongType, "'coordination.on-unavailable' must be local, open or closed, found \(kindName(value))", at: value)
                    continue
                }
                guard let mode = CoordinationPolicy.Unavailable(rawValue: text) else {
                    report(.invalidValue, "'coordination.on-unavailable' is '\(text.abbreviated)', not local, open or closed", at: value,
                           suggestion: Suggestions.didYouMean(text, in: modes) ?? "local: each instance keeps its share of every fleet limit; open: fleet limits are dropped; closed: loads fail")
                    continue
                }
                onUnavailable = mode
                origins[key] = location(value)
                if mode == .open {
                    report(.coordinationFailsOpen, "on-unavailable: open drops every fleet limit while Redis cannot be reached, and the instances then send at their combined rate", at: value,
                           suggestion: "use 'local' (each instance keeps its share of the limit) unless the partner tolerates bursts")
                }
            default: unhandled(key, keyNode)
            }
        }
        // A misspelt key was reported as unknown: "no redis" would say the same thing twice.
        if redis == nil, !hasDroppedKeys(node, kept: pairs.count) {
            report(.incompleteCoordination, "coordination has no 'redis', so the fleet has no backend", at: keyNode,
                   suggestion: "add 'redis: { url: \"redis://127.0.0.1:6379/0\" }'")
        }
        file.coordination = .init(
            policy: redis?.policy.map { CoordinationPolicy(redis: $0, onUnavailable: onUnavailable, definedAt: at, origins: origins) },
            location: at, hasTokenKey: redis?.hasTokenKey ?? false)
    }

    /// Whether the mapping at `node` has more keys than the `kept` ones `mapping(_:_:)` returned.
    private func hasDroppedKeys(_ node: Int, kept: Int) -> Bool {
        if case .mapping(let all) = tree[node].kind { return all.count > kept }
        return false
    }

    /// `coordination.redis`; the settings are nil when the section is broken.
    private mutating func parseRedis(_ node: Int, keyNode: Int, origins: inout [String: SourceLocation]) -> (policy: RedisCoordination?, hasTokenKey: Bool) {
        guard let pairs = mapping(node, PolicyLanguage.redis) else { return (nil, false) }
        var url: (text: String, endpoint: RedisEndpoint)?
        var username: PolicyString?
        var password: PolicyString?
        var keyPrefix = RedisCoordination.defaultKeyPrefix
        var timeout = RedisCoordination.defaultTimeout
        var tokenKey: PolicyString?
        var hasTokenKey = false
        var tls: (policy: TLSPolicy, keyNode: Int)?
        for (key, keyNode, value) in pairs {
            let path = "coordination.redis.\(key)"
            origins["redis.\(key)"] = location(value)
            switch key {
            case "url":
                guard let text = string(value, key: path) else { continue }
                switch RedisEndpoint.parse(text) {
                case .success(let endpoint): url = (text, endpoint)
                case .failure(let problem):
                    // A URL with a user or password in it is not quoted: it may hold a secret.
                    let shown = text.contains("@") ? "" : " '\(text.abbreviated)'"
                    report(.invalidRedisURL, "the Redis URL\(shown) \(problem.reason)", at: value, suggestion: problem.suggestion)
                }
            case "username":
                if let text = string(value, key: path) { username = references(text, at: value) }
            case "password":
                guard let text = string(value, key: path), let secret = references(text, at: value) else { continue }
                password = secret
                if let literal = secret.literalValue, !literal.isEmpty { reportLiteralSecret(path, name: "redis-password", at: value) }
            case "key-prefix":
                guard let text = string(value, key: path) else { continue }
                if RedisCoordination.isValidKeyPrefix(text) {
                    keyPrefix = text
                } else {
                    report(.invalidValue, "'\(path)' must be 1 to 64 printable ASCII characters without spaces, not '\(text.abbreviated)'", at: value,
                           suggestion: "e.g. \"courier:myapp:\"")
                }
            case "timeout":
                guard let d = duration(value, key: path, positive: true) else { continue }
                if d > RedisCoordination.maxTimeout {
                    report(.invalidValue, "'\(path)' is \(DurationFormat.format(d)), longer than the \(DurationFormat.format(RedisCoordination.maxTimeout)) a command may take", at: value,
                           suggestion: "Redis answers in about a millisecond; a few tens of milliseconds covers a slow network")
                } else {
                    timeout = d
                }
            case "token-key":
                hasTokenKey = true
                guard let text = string(value, key: path), let secret = references(text, at: value) else { continue }
                tokenKey = secret
                if let literal = secret.literalValue {
                    // Never quoted: it is a key.
                    if let bytes = Base64.decode(literal), bytes.count == 32 {
                        reportLiteralSecret(path, name: "courier-token-key", at: value)
                    } else {
                        let what = Base64.decode(literal).map { "decodes to \($0.count) bytes" } ?? "is not base64"
                        report(.invalidTokenKey, "'\(path)' \(what); it must be 32 bytes in base64 (an AES-256 key)", at: value,
                               suggestion: "make one with 'openssl rand -base64 32' and reference it: \"${env:COURIER_TOKEN_KEY}\"")
                    }
                }
            case "tls":
                var layer = PolicyLayer()
                parseTLS(value, into: &layer)
                if layer["tls.client-certificate"] == nil, let orphan = layer["tls.client-key"] ?? layer["tls.client-key-password"] {
                    report(.clientKeyWithoutCertificate, "coordination.redis.tls has a client key or key password but no client-certificate", at: orphan.location,
                           suggestion: "add 'client-certificate: FILE' beside it (the certificate, then any intermediates, in PEM)")
                }
                tls = (PolicyLinker.tls(layer), keyNode)
            default: unhandled(key, keyNode)
            }
        }
        if let tls, let url, !url.endpoint.usesTLS {
            report(.unreachableRule, "coordination.redis.tls never applies: the URL is redis://, so the connection is not TLS", at: tls.keyNode,
                   suggestion: "use rediss:// for TLS, or remove 'tls'")
        }
        guard let url else {
            if !pairs.contains(where: { $0.key == "url" }), !hasDroppedKeys(node, kept: pairs.count) {
                report(.incompleteCoordination, "coordination.redis has no 'url'", at: keyNode, suggestion: "add 'url: \"redis://127.0.0.1:6379/0\"'")
            }
            return (nil, hasTokenKey)
        }
        let policy = RedisCoordination(
            url: url.text, endpoint: url.endpoint, username: username, password: password, keyPrefix: keyPrefix,
            timeout: timeout, tokenKey: tokenKey, tls: tls?.policy)
        return (policy, hasTokenKey)
    }

    /// A string value, or nil (reported).
    private mutating func string(_ node: Int, key: String) -> String? {
        guard let (text, _) = scalar(node), !isNull(node) else {
            report(.wrongType, "'\(key)' must be a string, found \(kindName(node))", at: node)
            return nil
        }
        return text
    }
}
