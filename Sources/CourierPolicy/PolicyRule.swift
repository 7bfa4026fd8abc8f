public import CourierCore

/// One rule the policy compiler can report: a stable kebab-case id, its severity and a one-line summary.
///
/// ``all`` is the catalogue: `courier lint` lists it as SARIF `rules`, and docs/policy.md documents each one.
/// Ids never change meaning once published; a retired rule keeps its id out of use.
public struct PolicyRule: Sendable, Hashable {
    /// The stable kebab-case id diagnostics carry (`unknown-key`).
    public package(set) var id: String
    /// The severity every diagnostic of this rule has.
    public package(set) var severity: Diagnostic.Severity
    /// One sentence saying what the rule catches.
    public package(set) var summary: String

    package init(id: String, severity: Diagnostic.Severity, summary: String) {
        self.id = id
        self.severity = severity
        self.summary = summary
    }

    /// The rule with this id, if any.
    public static func named(_ id: String) -> PolicyRule? { all.first { $0.id == id } }

    // MARK: - Input and syntax (errors)

    /// `file-unreadable`: A policy file or an included file cannot be read.
    package static let fileUnreadable = PolicyRule(id: "file-unreadable", severity: .error, summary: "A policy file or an included file cannot be read.")
    /// `file-too-large`: A file is larger than PolicyLimits.maxFileBytes.
    package static let fileTooLarge = PolicyRule(id: "file-too-large", severity: .error, summary: "A file is larger than PolicyLimits.maxFileBytes.")
    /// `invalid-encoding`: A file is not valid UTF-8 text (binary garbage, another encoding).
    package static let invalidEncoding = PolicyRule(id: "invalid-encoding", severity: .error, summary: "A file is not valid UTF-8 text (binary garbage, another encoding).")
    /// `yaml-syntax`: The file is not well-formed YAML, or holds more than one document.
    package static let yamlSyntax = PolicyRule(id: "yaml-syntax", severity: .error, summary: "The file is not well-formed YAML, or holds more than one document.")
    /// `nesting-too-deep`: Mappings and sequences nest deeper than PolicyLimits.maxDepth.
    package static let nestingTooDeep = PolicyRule(id: "nesting-too-deep", severity: .error, summary: "Mappings and sequences nest deeper than PolicyLimits.maxDepth.")
    /// `too-many-nodes`: The document expands (aliases counted at every use) to more than PolicyLimits.maxNodes nodes.
    package static let tooManyNodes = PolicyRule(id: "too-many-nodes", severity: .error, summary: "The document expands (aliases counted at every use) to more than PolicyLimits.maxNodes nodes.")
    /// `too-many-includes`: A compilation reads more than PolicyLimits.maxIncludes files.
    package static let tooManyIncludes = PolicyRule(id: "too-many-includes", severity: .error, summary: "A compilation reads more than PolicyLimits.maxIncludes files.")
    /// `duplicate-key`: A mapping has the same key twice (reported at the second).
    package static let duplicateKey = PolicyRule(id: "duplicate-key", severity: .error, summary: "A mapping has the same key twice (reported at the second).")

    // MARK: - Structure (errors)

    /// `missing-version`: A file does not say 'version: 1'.
    package static let missingVersion = PolicyRule(id: "missing-version", severity: .error, summary: "A file does not say 'version: 1'.")
    /// `unsupported-version`: A file declares a language version other than 1.
    package static let unsupportedVersion = PolicyRule(id: "unsupported-version", severity: .error, summary: "A file declares a language version other than 1.")
    /// `unknown-key`: A key the language does not have (with a did-you-mean suggestion).
    package static let unknownKey = PolicyRule(id: "unknown-key", severity: .error, summary: "A key the language does not have (with a did-you-mean suggestion).")
    /// `wrong-type`: A value has the wrong YAML type (e.g. a list where a mapping belongs, or a bare number where a duration belongs).
    package static let wrongType = PolicyRule(id: "wrong-type", severity: .error, summary: "A value has the wrong YAML type (e.g. a list where a mapping belongs, or a bare number where a duration belongs).")
    /// `invalid-value`: A value is outside what its key accepts (scheme, multiplier, ratio, header name...).
    package static let invalidValue = PolicyRule(id: "invalid-value", severity: .error, summary: "A value is outside what its key accepts (scheme, multiplier, ratio, header name...).")
    /// `invalid-duration`: A duration is malformed (write 250ms, 5s, 2m, 1h).
    package static let invalidDuration = PolicyRule(id: "invalid-duration", severity: .error, summary: "A duration is malformed (write 250ms, 5s, 2m, 1h).")
    /// `invalid-size`: A size is malformed (write 512KiB, 10MiB, 1GiB).
    package static let invalidSize = PolicyRule(id: "invalid-size", severity: .error, summary: "A size is malformed (write 512KiB, 10MiB, 1GiB).")
    /// `invalid-rate`: A rate or burst is not a positive number.
    package static let invalidRate = PolicyRule(id: "invalid-rate", severity: .error, summary: "A rate or burst is not a positive number.")
    /// `invalid-secret-reference`: A malformed ${env:NAME} or ${file:path} reference.
    package static let invalidSecretReference = PolicyRule(id: "invalid-secret-reference", severity: .error, summary: "A malformed ${env:NAME} or ${file:path} reference.")

    // MARK: - Includes and names (errors)

    /// `include-missing`: An included file does not exist.
    package static let includeMissing = PolicyRule(id: "include-missing", severity: .error, summary: "An included file does not exist.")
    /// `include-cycle`: Files include each other in a cycle.
    package static let includeCycle = PolicyRule(id: "include-cycle", severity: .error, summary: "Files include each other in a cycle.")
    /// `duplicate-service`: Two services have the same name (across all included files).
    package static let duplicateService = PolicyRule(id: "duplicate-service", severity: .error, summary: "Two services have the same name (across all included files).")
    /// `duplicate-authoriser`: Two authorisers have the same name (across all included files).
    package static let duplicateAuthoriser = PolicyRule(id: "duplicate-authoriser", severity: .error, summary: "Two authorisers have the same name (across all included files).")

    // MARK: - Retry (errors)

    /// `invalid-max-attempts`: retry.max-attempts is less than 1 or more than 100.
    package static let invalidMaxAttempts = PolicyRule(id: "invalid-max-attempts", severity: .error, summary: "retry.max-attempts is less than 1 or more than 100.")
    /// `backoff-initial-exceeds-max`: retry.backoff.initial is longer than retry.backoff.max.
    package static let backoffInitialExceedsMax = PolicyRule(id: "backoff-initial-exceeds-max", severity: .error, summary: "retry.backoff.initial is longer than retry.backoff.max.")
    /// `unknown-jitter`: retry.backoff.jitter is not none, full, equal or decorrelated.
    package static let unknownJitter = PolicyRule(id: "unknown-jitter", severity: .error, summary: "retry.backoff.jitter is not none, full, equal or decorrelated.")
    /// `invalid-retry-condition`: A retry.on entry is not connect-error, timeout, connection-lost or a status 100-599.
    package static let invalidRetryCondition = PolicyRule(id: "invalid-retry-condition", severity: .error, summary: "A retry.on entry is not connect-error, timeout, connection-lost or a status 100-599.")
    /// `invalid-method`: A retry.methods entry is not an HTTP method token.
    package static let invalidMethod = PolicyRule(id: "invalid-method", severity: .error, summary: "A retry.methods entry is not an HTTP method token.")

    // MARK: - Authorisers (errors)

    /// `unknown-authoriser`: A service names an authoriser no file declares.
    package static let unknownAuthoriser = PolicyRule(id: "unknown-authoriser", severity: .error, summary: "A service names an authoriser no file declares.")
    /// `unknown-plugin`: An authoriser's plugin type is not in the plugin registry.
    package static let unknownPlugin = PolicyRule(id: "unknown-plugin", severity: .error, summary: "An authoriser's plugin type is not in the plugin registry.")
    /// `unknown-setting`: An authoriser setting its plugin type does not accept.
    package static let unknownSetting = PolicyRule(id: "unknown-setting", severity: .error, summary: "An authoriser setting its plugin type does not accept.")
    /// `missing-setting`: An authoriser lacks a setting its plugin type requires.
    package static let missingSetting = PolicyRule(id: "missing-setting", severity: .error, summary: "An authoriser lacks a setting its plugin type requires.")
    /// `invalid-setting`: An authoriser setting has the wrong type or fails its plugin's checks.
    package static let invalidSetting = PolicyRule(id: "invalid-setting", severity: .error, summary: "An authoriser setting has the wrong type or fails its plugin's checks.")

    // MARK: - Hosts and routes (errors)

    /// `invalid-host-pattern`: A host or host pattern is malformed.
    package static let invalidHostPattern = PolicyRule(id: "invalid-host-pattern", severity: .error, summary: "A host or host pattern is malformed.")
    /// `service-without-hosts`: A service claims no hosts, so no request can reach it.
    package static let serviceWithoutHosts = PolicyRule(id: "service-without-hosts", severity: .error, summary: "A service claims no hosts, so no request can reach it.")
    /// `host-claimed-twice`: Two services (or one service twice) claim the same host pattern.
    package static let hostClaimedTwice = PolicyRule(id: "host-claimed-twice", severity: .error, summary: "Two services (or one service twice) claim the same host pattern.")
    /// `invalid-fallback`: A fallback address is malformed.
    package static let invalidFallback = PolicyRule(id: "invalid-fallback", severity: .error, summary: "A fallback address is malformed.")
    /// `fallback-cycle`: Fallback lists lead back to the host they stand in for.
    package static let fallbackCycle = PolicyRule(id: "fallback-cycle", severity: .error, summary: "Fallback lists lead back to the host they stand in for.")
    /// `invalid-endpoint`: A rate-limit endpoint key does not start with '/'.
    package static let invalidEndpoint = PolicyRule(id: "invalid-endpoint", severity: .error, summary: "A rate-limit endpoint key does not start with '/'.")

    // MARK: - TLS (errors)

    /// `invalid-pin`: A TLS pin is not sha256/<base64 of 32 bytes>.
    package static let invalidPin = PolicyRule(id: "invalid-pin", severity: .error, summary: "A TLS pin is not sha256/<base64 of 32 bytes>.")
    /// `invalid-tls-version`: tls.min-version is not "1.2" or "1.3".
    package static let invalidTLSVersion = PolicyRule(id: "invalid-tls-version", severity: .error, summary: "tls.min-version is not \"1.2\" or \"1.3\".")
    /// `ca-file-missing`: tls.ca-file names a file that does not exist.
    package static let caFileMissing = PolicyRule(id: "ca-file-missing", severity: .error, summary: "tls.ca-file names a file that does not exist.")
    /// `client-certificate-missing`: tls.client-certificate or tls.client-key names a file that does not exist.
    package static let clientCertificateMissing = PolicyRule(id: "client-certificate-missing", severity: .error, summary: "tls.client-certificate or tls.client-key names a file that does not exist.")
    /// `client-key-without-certificate`: tls.client-key or tls.client-key-password is given without tls.client-certificate.
    package static let clientKeyWithoutCertificate = PolicyRule(id: "client-key-without-certificate", severity: .error, summary: "tls.client-key or tls.client-key-password is given without tls.client-certificate.")
    /// `invalid-connect-to`: A service's connect-to is not unix: followed by a socket path.
    package static let invalidConnectTo = PolicyRule(id: "invalid-connect-to", severity: .error, summary: "A service's connect-to is not unix: followed by a socket path.")

    // MARK: - Proxies (errors)

    /// `invalid-proxy-url`: proxy.url is not [scheme://][user[:password]@]host[:port], or proxy has no url.
    package static let invalidProxyURL = PolicyRule(id: "invalid-proxy-url", severity: .error, summary: "proxy.url is not [scheme://][user[:password]@]host[:port], or a proxy section has no url.")
    /// `unknown-proxy-scheme`: proxy.url's scheme is not http, https, socks5 or socks5h.
    package static let unknownProxyScheme = PolicyRule(id: "unknown-proxy-scheme", severity: .error, summary: "proxy.url's scheme is not http, https, socks5 or socks5h.")

    // MARK: - Coordination (errors)

    /// `duplicate-coordination`: A second file of the policy has a coordination section (a policy has one backend).
    package static let duplicateCoordination = PolicyRule(id: "duplicate-coordination", severity: .error, summary: "A second file of the policy has a coordination section (a policy has one backend).")
    /// `incomplete-coordination`: A coordination section has no redis, or its redis has no url.
    package static let incompleteCoordination = PolicyRule(id: "incomplete-coordination", severity: .error, summary: "A coordination section has no redis, or its redis has no url.")
    /// `invalid-redis-url`: coordination.redis.url is not redis:// or rediss://host[:port][/db], or holds a user or password.
    package static let invalidRedisURL = PolicyRule(id: "invalid-redis-url", severity: .error, summary: "coordination.redis.url is not redis:// or rediss://host[:port][/db], or holds a user or password.")
    /// `invalid-token-key`: A literal coordination.redis.token-key is not 32 bytes in base64.
    package static let invalidTokenKey = PolicyRule(id: "invalid-token-key", severity: .error, summary: "A literal coordination.redis.token-key is not 32 bytes in base64.")
    /// `fleet-scope-without-coordination`: A rate limit has scope: fleet, but the policy has no coordination section.
    package static let fleetScopeWithoutCoordination = PolicyRule(id: "fleet-scope-without-coordination", severity: .error, summary: "A rate limit has scope: fleet, but the policy has no coordination section.")
    /// `shared-tokens-without-coordination`: An authoriser has share-tokens: true, but the policy has no coordination section.
    package static let sharedTokensWithoutCoordination = PolicyRule(id: "shared-tokens-without-coordination", severity: .error, summary: "An authoriser has share-tokens: true, but the policy has no coordination section.")
    /// `shared-tokens-without-token-key`: An authoriser has share-tokens: true, but coordination.redis has no token-key to encrypt them with.
    package static let sharedTokensWithoutTokenKey = PolicyRule(id: "shared-tokens-without-token-key", severity: .error, summary: "An authoriser has share-tokens: true, but coordination.redis has no token-key to encrypt them with.")
    /// `shared-tokens-unsupported`: An authoriser has share-tokens: true, but its plugin type cannot share tokens.
    package static let sharedTokensUnsupported = PolicyRule(id: "shared-tokens-unsupported", severity: .error, summary: "An authoriser has share-tokens: true, but its plugin type cannot share tokens.")

    // MARK: - Warnings

    /// `credentials-over-http`: An authoriser serves a plain-http service.
    package static let credentialsOverHTTP = PolicyRule(id: "credentials-over-http", severity: .warning, summary: "An authoriser serves a plain-http service.")
    /// `secret-literal`: A secret setting holds a literal value instead of ${env:...} or ${file:...}.
    package static let secretLiteral = PolicyRule(id: "secret-literal", severity: .warning, summary: "A secret setting holds a literal value instead of ${env:...} or ${file:...}.")
    /// `non-idempotent-retry`: Retries are enabled for a non-idempotent method without an idempotency key.
    package static let nonIdempotentRetry = PolicyRule(id: "non-idempotent-retry", severity: .warning, summary: "Retries are enabled for a non-idempotent method without an idempotency key.")
    /// `unbounded-backoff`: A retry curve has no finite backoff.max.
    package static let unboundedBackoff = PolicyRule(id: "unbounded-backoff", severity: .warning, summary: "A retry curve has no finite backoff.max.")
    /// `unreachable-rule`: A rule that can never match or never take effect.
    package static let unreachableRule = PolicyRule(id: "unreachable-rule", severity: .warning, summary: "A rule that can never match or never take effect.")
    /// `unused-authoriser`: An authoriser no service uses.
    package static let unusedAuthoriser = PolicyRule(id: "unused-authoriser", severity: .warning, summary: "An authoriser no service uses.")
    /// `client-key-readable`: The client key file can be read by users other than its owner.
    package static let clientKeyReadable = PolicyRule(id: "client-key-readable", severity: .warning, summary: "The client key file can be read by users other than its owner.")
    /// `single-pin`: TLS pinning with one pin and no backup pin.
    package static let singlePin = PolicyRule(id: "single-pin", severity: .warning, summary: "TLS pinning with one pin and no backup pin.")
    /// `retry-exceeds-timeout`: The retry curve's worst case does not fit timeouts.total, or connect > total.
    package static let retryExceedsTimeout = PolicyRule(id: "retry-exceeds-timeout", severity: .warning, summary: "The retry curve's worst case does not fit timeouts.total, or connect > total.")
    /// `coordination-fails-open`: coordination.on-unavailable is open, so every fleet limit is dropped while Redis is down.
    package static let coordinationFailsOpen = PolicyRule(id: "coordination-fails-open", severity: .warning, summary: "coordination.on-unavailable is open, so every fleet limit is dropped while Redis is down.")
    /// `too-many-diagnostics`: A file has more diagnostics than PolicyLimits.maxDiagnosticsPerFile; the rest are counted, not shown.
    package static let tooManyDiagnostics = PolicyRule(id: "too-many-diagnostics", severity: .warning, summary: "A file has more diagnostics than PolicyLimits.maxDiagnosticsPerFile; the rest are counted, not shown.")

    /// Every rule, in catalogue order.
    public static let all: [PolicyRule] = [
        fileUnreadable, fileTooLarge, invalidEncoding, yamlSyntax, nestingTooDeep, tooManyNodes, tooManyIncludes,
        duplicateKey, missingVersion, unsupportedVersion, unknownKey, wrongType, invalidValue, invalidDuration,
        invalidSize, invalidRate, invalidSecretReference, includeMissing, includeCycle, duplicateService,
        duplicateAuthoriser, invalidMaxAttempts, backoffInitialExceedsMax, unknownJitter, invalidRetryCondition,
        invalidMethod, unknownAuthoriser, unknownPlugin, unknownSetting, missingSetting, invalidSetting,
        invalidHostPattern, serviceWithoutHosts, hostClaimedTwice, invalidFallback, fallbackCycle, invalidEndpoint,
        invalidPin, invalidTLSVersion, caFileMissing, clientCertificateMissing, clientKeyWithoutCertificate, invalidConnectTo,
        invalidProxyURL, unknownProxyScheme, duplicateCoordination, incompleteCoordination, invalidRedisURL,
        invalidTokenKey, fleetScopeWithoutCoordination, sharedTokensWithoutCoordination, sharedTokensWithoutTokenKey,
        sharedTokensUnsupported,
        credentialsOverHTTP, secretLiteral, nonIdempotentRetry, unboundedBackoff, unreachableRule, unusedAuthoriser,
        clientKeyReadable, singlePin, retryExceedsTimeout, coordinationFailsOpen, tooManyDiagnostics,
    ]
}
