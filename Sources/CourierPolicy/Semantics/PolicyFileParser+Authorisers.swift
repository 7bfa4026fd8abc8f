internal import CourierCore

/// `authorisers:`: plugin types and their settings, checked against the registry's descriptors.
extension PolicyFileParser {
    mutating func parseAuthoriser(name: String, nameNode: Int, _ node: Int) {
        guard let pairs = mapping(node, PolicyLanguage.authoriser) else {
            let instance = AuthoriserInstance(name: name, plugin: "", settings: [:], definedAt: location(nameNode))
            file.authorisers.append(.init(instance: instance, location: location(nameNode)))
            return
        }
        var plugin: String?
        var pluginNode: Int?
        var settingsNode: Int?
        var settingsKeyNode: Int?
        var timeout = Duration.seconds(10)
        var allowPlainHTTP = false
        var shareTokensKey: Int?
        var origins: [String: SourceLocation] = [:]
        for (key, keyNode, value) in pairs {
            if key != "settings" { origins[key] = location(value) }
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
            case "share-tokens":
                if let b = boolean(value, key: "share-tokens") { shareTokensKey = b ? keyNode : nil }
            default: unhandled(key, keyNode)
            }
        }
        guard let plugin, let pluginNode else {
            if !pairs.contains(where: { $0.key == "plugin" }) {
                report(.missingSetting, "authoriser '\(name.abbreviated)' has no 'plugin'", at: nameNode,
                       suggestion: "add 'plugin:' with one of \(registry.typeNames.joined(separator: ", "))")
            }
            // Still declare the name, so services that use it do not also get "unknown authoriser".
            let instance = AuthoriserInstance(name: name, plugin: "", settings: [:], timeout: timeout, allowPlainHTTP: allowPlainHTTP, definedAt: location(nameNode))
            file.authorisers.append(.init(instance: instance, location: location(nameNode)))
            return
        }
        let descriptor = registry[plugin]
        if descriptor == nil {
            report(.unknownPlugin, "authoriser '\(name.abbreviated)' uses plugin type '\(plugin.abbreviated)', which is not registered (known: \(registry.typeNames.joined(separator: ", ")))",
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
                    origins["settings.\(key)"] = location(v)
                    if let descriptor {
                        guard let spec = descriptor.setting(named: key) else {
                            report(.unknownSetting, "plugin '\(plugin.abbreviated)' has no setting '\(key.abbreviated)' (it accepts \(descriptor.settings.map(\.name).joined(separator: ", ")))",
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
                report(.missingSetting, "plugin '\(plugin.abbreviated)' requires the setting '\(spec.name)' (\(spec.summary.lowercasedFirst.withoutFinalPeriod))", at: anchor,
                       suggestion: "add '\(spec.name):' under settings")
            }
            for problem in descriptor.crossCheck(settings) {
                let node = problem.setting.flatMap { settingNodes[$0] } ?? anchor
                report(.invalidSetting, problem.message, at: node)
            }
            if let shareTokensKey, !descriptor.supportsSharedTokens {
                let able = registry.typeNames.filter { registry[$0]?.supportsSharedTokens == true }
                report(.sharedTokensUnsupported, "authoriser '\(name.abbreviated)' says share-tokens: true, but plugin '\(plugin.abbreviated)' cannot keep its credentials in the fleet's shared token store",
                       at: shareTokensKey,
                       suggestion: able.isEmpty ? "remove 'share-tokens'" : "remove 'share-tokens'; the plugin types that can share tokens: \(able.joined(separator: ", "))")
            }
        }
        var instance = AuthoriserInstance(
            name: name, plugin: plugin, settings: settings, timeout: timeout, allowPlainHTTP: allowPlainHTTP,
            shareTokens: shareTokensKey != nil, definedAt: location(nameNode))
        instance.origins = origins
        file.authorisers.append(.init(instance: instance, location: location(nameNode), shareTokensKey: shareTokensKey.map { location($0) }))
    }

    mutating func setting(_ node: Int, spec: AuthoriserTypeDescriptor.Setting, plugin: String) -> PolicyValue? {
        let what = "setting '\(spec.name)' of plugin '\(plugin.abbreviated)'"
        switch spec.kind {
        case .string, .secret, .url, .headerName, .choice:
            guard let (text, _) = scalar(node), !isNull(node) else {
                report(.invalidSetting, "\(what) must be a \(spec.kind)", at: node)
                return nil
            }
            guard let parsed = references(text, at: node) else { return nil }
            if let literal = parsed.literalValue {
                switch spec.kind {
                case .secret:
                    if !literal.isEmpty { reportLiteralSecret(what, name: spec.name, at: node) }
                case .url:
                    guard let url = HTTPURL(literal) else {
                        report(.invalidSetting, "\(what) must be an absolute http(s) URL, not '\(literal.abbreviated)'", at: node)
                        return nil
                    }
                    if url.scheme == "http" && url.host != "localhost" && url.host != "127.0.0.1" && url.host != "::1" {
                        report(.credentialsOverHTTP, "\(what) sends credentials over plain http", at: node, suggestion: "use https")
                    }
                case .headerName:
                    guard !literal.isEmpty, literal.utf8.allSatisfy(HTTPMethod.isTokenCharacter) else {
                        report(.invalidSetting, "\(what) must be a header name, not '\(literal.abbreviated)'", at: node)
                        return nil
                    }
                case .choice(let options):
                    guard options.contains(literal) else {
                        report(.invalidSetting, "\(what) must be one of \(options.joined(separator: ", ")), not '\(literal.abbreviated)'", at: node,
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

    /// `text` split into literal text and secret references; nil when a reference is malformed (reported).
    mutating func references(_ text: String, at node: Int) -> PolicyString? {
        switch SecretReferenceParser.parse(text, relativeTo: self.path) {
        case .success(let s): return s
        case .failure(let malformed):
            report(.invalidSecretReference, malformed.message, at: node)
            return nil
        }
    }

    /// The `secret-literal` warning: `what` (a credential called `name`) is written into the file.
    mutating func reportLiteralSecret(_ what: String, name: String, at node: Int) {
        report(.secretLiteral, "\(what) is a credential written into the policy file", at: node,
               suggestion: "reference it instead: \"${env:\(name.uppercased().replacingDashes)}\" or \"${file:secrets/\(name)}\"")
    }

    /// A settings value of an unknown plugin type, kept as written.
    func genericValue(_ node: Int, depth: Int) -> PolicyValue? {
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
}
