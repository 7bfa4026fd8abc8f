internal import CCourierYAML

/// Turns YAML text into a ``YAMLTree`` straight from libyaml's event stream (the system's libyaml, through
/// `CCourierYAML`).
///
/// Why not `Yams.compose`: it throws on the first mapping with a duplicate key and reports the *first*
/// occurrence, so no other diagnostic of the file survives; and it composes recursively. This composer keeps
/// an explicit stack (no recursion, whatever the depth), reports every duplicate key at its second occurrence
/// and drops it, and enforces ``PolicyLimits`` while it reads: nesting depth, and the number of nodes a walk
/// would visit with every alias expanded (billion laughs stops after `maxNodes` steps, not after 10^9).
struct YAMLComposer {
    /// What went wrong when no tree could be built at all.
    struct Failure: Error {
        var rule: PolicyRule
        var message: String
        var suggestion: String?
        var line: Int
        var column: Int
    }

    let limits: PolicyLimits

    /// Composes `bytes`; duplicates found along the way are appended to `duplicates` as (key, line, column).
    func compose(_ bytes: [UInt8], duplicates: inout [(key: String, line: Int, column: Int)]) -> Result<YAMLTree, Failure> {
        bytes.withUnsafeBufferPointer { buffer in
            compose(buffer, duplicates: &duplicates)
        }
    }

    private struct Frame {
        enum Kind { case sequence, mapping }
        var kind: Kind
        var line: Int
        var column: Int
        var anchor: String?
        var children: [Int] = []
        var pairs: [(key: Int, value: Int)] = []
        var pendingKey: Int?
        /// Scalar keys seen so far: a list while small (cheaper than hashing), a set once large.
        var seenKeys: [String] = []
        var seenKeySet: Set<String> = []

        mutating func insertKey(_ key: String) -> Bool {
            if seenKeys.count < 16 {
                if seenKeys.contains(key) { return false }
                seenKeys.append(key)
                if seenKeys.count == 16 { seenKeySet = Set(seenKeys) }
                return true
            }
            return seenKeySet.insert(key).inserted
        }
    }

    private func compose(
        _ buffer: UnsafeBufferPointer<UInt8>,
        duplicates: inout [(key: String, line: Int, column: Int)]
    ) -> Result<YAMLTree, Failure> {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else {
            return .failure(Failure(rule: .yamlSyntax, message: "the YAML parser could not start (out of memory)", line: 1, column: 1))
        }
        defer { yaml_parser_delete(&parser) }
        yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING)
        yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)

        var tree = YAMLTree()
        var anchors: [String: (index: Int, size: Int)] = [:]
        var sizes: [Int] = []  // expanded size of each node
        var stack: [Frame] = []
        var documents = 0

        func failure(_ rule: PolicyRule, _ message: String, _ mark: yaml_mark_t, suggestion: String? = nil) -> Failure {
            Failure(rule: rule, message: message, suggestion: suggestion, line: Int(mark.line) + 1, column: Int(mark.column) + 1)
        }

        /// Attaches a finished node (or an alias to one) to its parent; returns a failure on a limit.
        func attach(_ index: Int, keyText: String?, line: Int, column: Int) {
            guard !stack.isEmpty else {
                tree.root = index
                return
            }
            let top = stack.count - 1
            switch stack[top].kind {
            case .sequence:
                stack[top].children.append(index)
            case .mapping:
                if let key = stack[top].pendingKey {
                    stack[top].pendingKey = nil
                    if key >= 0 { stack[top].pairs.append((key, index)) }
                } else {
                    if let text = keyText {
                        if !stack[top].insertKey(text) {
                            duplicates.append((text, line, column))
                            stack[top].pendingKey = -1  // drop this pair
                            return
                        }
                    }
                    stack[top].pendingKey = index
                }
            }
        }

        while true {
            var event = yaml_event_t()
            guard yaml_parser_parse(&parser, &event) == 1 else {
                let problem = parser.problem.map { String(cString: $0) } ?? "malformed YAML"
                let context = parser.context.map { String(cString: $0) }
                let message = context.map { "\(problem) (\($0))" } ?? problem
                if let tab = TabIndentation.find(in: buffer, near: Int(parser.problem_mark.line) + 1) {
                    return .failure(Failure(
                        rule: .yamlSyntax, message: "YAML forbids tabs for indentation (libyaml: \(message))",
                        suggestion: "indent with spaces", line: tab.line, column: tab.column
                    ))
                }
                return .failure(failure(.yamlSyntax, "YAML syntax error: \(message)", parser.problem_mark))
            }
            defer { yaml_event_delete(&event) }
            let mark = event.start_mark
            let line = Int(mark.line) + 1
            let column = Int(mark.column) + 1

            switch event.type {
            case YAML_STREAM_START_EVENT, YAML_DOCUMENT_END_EVENT:
                continue
            case YAML_STREAM_END_EVENT:
                tree.expandedNodeCount = tree.root.map { sizes[$0] } ?? 0
                return .success(tree)
            case YAML_DOCUMENT_START_EVENT:
                documents += 1
                if documents > 1 {
                    return .failure(failure(
                        .yamlSyntax, "a policy file holds one YAML document, but a second one starts here", mark,
                        suggestion: "remove the '---' separator or split the documents into files and use 'include'"))
                }
            case YAML_ALIAS_EVENT:
                let name = String(cString: event.data.alias.anchor)
                guard let target = anchors[name] else {
                    return .failure(failure(.yamlSyntax, "YAML syntax error: alias '*\(name.abbreviated)' refers to no anchor defined before it", mark))
                }
                tree.expandedNodeCount = tree.expandedNodeCount.addingReportingOverflow(target.size).partialValue
                if tree.expandedNodeCount > limits.maxNodes || tree.expandedNodeCount < 0 {
                    return .failure(tooManyNodes(mark))
                }
                let keyText: String? = {
                    if case .scalar(let s, _) = tree.nodes[target.index].kind { return s }
                    return nil
                }()
                attach(target.index, keyText: keyText, line: line, column: column)
            case YAML_SCALAR_EVENT:
                let s = event.data.scalar
                let text = String(decoding: UnsafeBufferPointer(start: s.value, count: Int(s.length)), as: UTF8.self)
                let plain = s.style == YAML_PLAIN_SCALAR_STYLE && s.tag == nil
                let index = tree.nodes.count
                tree.nodes.append(.init(kind: .scalar(text, plain: plain), line: line, column: column))
                sizes.append(1)
                tree.expandedNodeCount += 1
                if tree.expandedNodeCount > limits.maxNodes { return .failure(tooManyNodes(mark)) }
                if let anchor = s.anchor { anchors[String(cString: anchor)] = (index, 1) }
                attach(index, keyText: text, line: line, column: column)
            case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
                if stack.count >= limits.maxDepth {
                    return .failure(failure(
                        .nestingTooDeep, "the document nests deeper than \(limits.maxDepth) levels", mark,
                        suggestion: "a policy needs only a few levels; this looks like generated or hostile input"))
                }
                let isSequence = event.type == YAML_SEQUENCE_START_EVENT
                let anchorPointer = isSequence ? event.data.sequence_start.anchor : event.data.mapping_start.anchor
                stack.append(Frame(
                    kind: isSequence ? .sequence : .mapping, line: line, column: column,
                    anchor: anchorPointer.map { String(cString: $0) }))
                tree.expandedNodeCount += 1
                if tree.expandedNodeCount > limits.maxNodes { return .failure(tooManyNodes(mark)) }
            case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                let frame = stack.removeLast()
                let index = tree.nodes.count
                let size: Int
                switch frame.kind {
                case .sequence:
                    tree.nodes.append(.init(kind: .sequence(frame.children), line: frame.line, column: frame.column))
                    size = frame.children.reduce(1) { $0 &+ sizes[$1] }
                case .mapping:
                    tree.nodes.append(.init(kind: .mapping(frame.pairs), line: frame.line, column: frame.column))
                    size = frame.pairs.reduce(1) { $0 &+ sizes[$1.key] &+ sizes[$1.value] }
                }
                sizes.append(size < 0 ? Int.max / 2 : size)
                if let anchor = frame.anchor { anchors[anchor] = (index, sizes[index]) }
                attach(index, keyText: nil, line: frame.line, column: frame.column)
            default:
                continue
            }
        }
    }

    private func tooManyNodes(_ mark: yaml_mark_t) -> Failure {
        Failure(
            rule: .tooManyNodes,
            message: "the document expands to more than \(limits.maxNodes) YAML nodes (aliases counted each time they are used)",
            suggestion: "this looks like an alias bomb ('billion laughs'); policies do not need aliases that multiply",
            line: Int(mark.line) + 1, column: Int(mark.column) + 1)
    }
}
