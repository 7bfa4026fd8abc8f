internal import CourierCore

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
    var diagnostics: [Diagnostic] = []
    /// The file being built (extensions in the PolicyFileParser+*.swift files fill it in).
    var file: ParsedPolicyFile

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
            case "coordination":
                parseCoordination(value, keyNode: keyNode)
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

    mutating func parseVersion(_ node: Int) {
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
            report(.unsupportedVersion, "'\(text.abbreviated)' is not a language version; this compiler reads version 1", at: node, suggestion: "write 'version: 1'")
        }
    }

    mutating func parseIncludes(_ node: Int) {
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

    mutating func parseDefaults(_ node: Int) {
        guard let pairs = mapping(node, PolicyLanguage.defaults) else { return }
        var layer = PolicyLayer()
        for (key, keyNode, value) in pairs {
            switch key {
            case "timeouts": parseTimeouts(value, into: &layer)
            case "retry": parseRetry(value, into: &layer)
            case "rate-limit": parseRateLimit(value, into: &layer)
            case "tls": parseTLS(value, into: &layer)
            case "proxy": parseProxy(value, into: &layer)
            case "propagate-trace-context":
                if let b = boolean(value, key: key) { layer.set(key, .bool(b), at: location(value)) }
            default: unhandled(key, keyNode)
            }
        }
        file.defaults = layer
    }
}
