/// A composed YAML document: every node in one array, children referring to each other by index.
///
/// Aliases are not copied: an alias refers to the index of its anchored node, so a "billion laughs" document
/// costs memory proportional to its text. ``expandedNodeCount`` is what a walk that follows every alias would
/// visit; the composer stops as soon as it passes ``PolicyLimits/maxNodes``.
struct YAMLTree: Sendable {
    struct Node: Sendable {
        enum Kind: Sendable {
            /// A scalar's text; `plain` is true for an unquoted scalar without an explicit tag, the only kind
            /// a number, boolean or `null` can be.
            case scalar(String, plain: Bool)
            case sequence([Int])
            /// Key and value node indices, in document order, duplicates already removed.
            case mapping([(key: Int, value: Int)])
        }

        var kind: Kind
        /// 1-based line and column of the node's first character.
        var line: Int
        var column: Int
    }

    var nodes: [Node] = []
    /// The document's root, nil for an empty file.
    var root: Int?
    /// Nodes a full walk visits, aliases expanded.
    var expandedNodeCount = 0

    subscript(_ index: Int) -> Node { nodes[index] }
}
