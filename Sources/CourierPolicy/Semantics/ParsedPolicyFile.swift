internal import CourierCore

/// One policy file after parsing and per-value validation, before includes are merged.
struct ParsedPolicyFile: Sendable {
    struct Include: Sendable {
        /// The path as written, resolved against the including file's directory.
        var path: String
        var location: SourceLocation
    }

    struct Service: Sendable {
        var name: String
        /// Where the service's name is (its key under `services:`).
        var location: SourceLocation
        var hosts: [(pattern: HostPattern, location: SourceLocation)]
        /// Whether a `hosts:` key was present (an empty list is reported differently from a missing one).
        var hostsLocation: SourceLocation?
        /// Whether some host entry was malformed (already reported; no "no hosts" cascade).
        var hostsInvalid = false
        /// The service's own keys.
        var layer: PolicyLayer
    }

    struct Authoriser: Sendable {
        var instance: AuthoriserInstance
        var location: SourceLocation
        /// Where `share-tokens` is (its key), when the authoriser has it.
        var shareTokensKey: SourceLocation? = nil
    }

    /// A `coordination:` section.
    struct Coordination: Sendable {
        /// nil when the section is broken (already reported).
        var policy: CoordinationPolicy?
        /// Where the `coordination` key is.
        var location: SourceLocation
        /// Whether `redis` says `token-key` at all (a malformed one is reported as such, not as missing).
        var hasTokenKey: Bool
    }

    var path: String
    var version: Int?
    var includes: [Include] = []
    var defaults = PolicyLayer()
    var authorisers: [Authoriser] = []
    var services: [Service] = []
    var coordination: Coordination?
}
