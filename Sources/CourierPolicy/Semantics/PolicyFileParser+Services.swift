internal import CourierCore

/// `services:`: hosts, scheme, authoriser, fallbacks, `tls:` and `cache:`.
extension PolicyFileParser {
    mutating func parseService(name: String, nameNode: Int, _ node: Int) {
        var service = ParsedPolicyFile.Service(name: name, location: location(nameNode), hosts: [], hostsLocation: nil, layer: PolicyLayer())
        guard let pairs = mapping(node, PolicyLanguage.service) else {
            service.hostsInvalid = true  // already reported as the wrong type
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
                        report(.invalidHostPattern, "'\(text.abbreviated)' is not a valid host pattern: \(problem.reason)", at: item)
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
                    report(.invalidValue, "scheme '\(text.abbreviated)' is not https or http", at: value,
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
                        report(.invalidHostPattern, "fallbacks key '\(host.abbreviated)' is not a valid host: \(problem.reason)", at: hostNode)
                        continue
                    case .success(let p) where p.isWildcard:
                        report(.unreachableRule, "fallbacks for '\(host.abbreviated)' can never apply: fallbacks are looked up by the exact host of a request", at: hostNode,
                               suggestion: "list each exact host the service claims")
                        continue
                    case .success(let p): pattern = p
                    }
                    var out: [HostAddress] = []
                    var ok = true
                    for item in list(addresses, key: "fallbacks.\(host.abbreviated)") ?? [] {
                        guard let (text, _) = scalar(item), let address = HostSyntax.address(text) else {
                            report(.invalidFallback, "fallback '\((scalar(item)?.0 ?? "").abbreviated)' is not a host, host:port or IP address", at: item)
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
            case "connect-to": parseConnectTo(value, into: &layer)
            case "proxy": parseProxy(value, into: &layer)
            case "cache": parseCache(value, into: &layer)
            case "propagate-trace-context":
                if let b = boolean(value, key: key) { layer.set(key, .bool(b), at: at) }
            default: unhandled(key, keyNode)
            }
        }
        service.layer = layer
        file.services.append(service)
    }

    mutating func parseTLS(_ node: Int, into layer: inout PolicyLayer) {
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
                        report(.invalidPin, "pin '\(text.abbreviated)' must start with 'sha256/'", at: item, suggestion: "pins are 'sha256/' followed by the base64 of the SHA-256 of the certificate's SubjectPublicKeyInfo")
                        ok = false
                        continue
                    }
                    guard let bytes = Base64.decode(String(text.dropFirst(7))), bytes.count == 32 else {
                        report(.invalidPin, "pin '\(text.abbreviated)' is not the base64 of a 32-byte SHA-256 digest", at: item,
                               suggestion: "compute it with: openssl x509 -pubkey -noout -in cert.pem | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64")
                        ok = false
                        continue
                    }
                    pins.append(TLSPolicy.Pin(sha256: bytes))
                }
                if ok, list(value, key: nil) != nil { layer.set(path, .pins(pins), at: location(value)) }
            case "ca-file":
                if let absolute = caFile(value, key: path) { layer.set(path, .string(absolute), at: location(value)) }
            case "min-version":
                guard let (text, _) = scalar(value), !isNull(value) else {
                    report(.invalidTLSVersion, "tls.min-version must be \"1.2\" or \"1.3\"", at: value)
                    continue
                }
                if let version = TLSPolicy.Version(rawValue: text) {
                    layer.set(path, .tlsVersion(version), at: location(value))
                } else if ["1.0", "1.1", "1"].contains(text) {
                    report(.invalidTLSVersion, "TLS \(text.abbreviated) is obsolete (RFC 8996) and not supported", at: value, suggestion: "write \"1.2\" or \"1.3\"")
                } else {
                    report(.invalidTLSVersion, "'\(text.abbreviated)' is not a TLS version Courier supports", at: value, suggestion: "write \"1.2\" or \"1.3\"")
                }
            case "client-certificate", "client-key", "client-key-password": parseClientIdentity(key, value, into: &layer)
            default: unhandled(key, keyNode)
            }
        }
    }

    /// A `ca-file` value (`tls.ca-file`, `proxy.ca-file`) as an absolute path, relative to this file; nil when it
    /// is not a path or names no file (reported).
    mutating func caFile(_ value: Int, key: String) -> String? {
        guard let (text, _) = scalar(value), !isNull(value), !text.isEmpty else {
            report(.wrongType, "\(key) must be a file path", at: value)
            return nil
        }
        let absolute = PolicyFileSystem.absolute(PolicyFileSystem.resolve(text, from: self.path))
        guard SystemCall.isRegularFile(absolute) else {
            report(.caFileMissing, "\(key) '\(text.abbreviated)' does not exist (looked for \(absolute.abbreviated(to: 1024)))", at: value,
                   suggestion: "the path is relative to the file that says it")
            return nil
        }
        return absolute
    }

    mutating func parseCache(_ node: Int, into layer: inout PolicyLayer) {
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
                        report(.wrongType, "cache.max-size is a bare number; write a unit, e.g. '\(text.abbreviated)B' or '10MiB'", at: value)
                    } else {
                        layer.set(path, .size(bytes), at: location(value))
                    }
                } else {
                    report(.invalidSize, "'\(text.abbreviated)' is not a size", at: value, suggestion: "write a number and a unit without a space: 512KiB, 10MiB, 1GiB")
                }
            default: unhandled(key, keyNode)
            }
        }
    }
}
