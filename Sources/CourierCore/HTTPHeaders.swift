/// An ordered list of HTTP fields (RFC 9110 §5): names are compared case-insensitively, order and
/// repetition are kept exactly as they were added or received.
///
/// `HTTPHeaders` stores what it is given; it does not validate on insertion, because a parser that already
/// checked every byte should not pay twice. Encoders check with ``isValidName(_:)`` and ``isValidValue(_:)``
/// (or ``firstInvalidField``) before producing any byte. Equality and hashing compare the fields in order, with
/// names compared exactly as stored.
public struct HTTPHeaders: Hashable, Sendable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// One field line: a name and its value (without surrounding whitespace).
    public struct Field: Hashable, Sendable, CustomStringConvertible {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }

        public var description: String { "\(name): \(value)" }
    }

    /// The fields, in order.
    public private(set) var fields: [Field]

    /// An empty list.
    public init() { fields = [] }

    /// A list holding `pairs` in order (repeated names are kept).
    public init(_ pairs: [(String, String)]) {
        fields = pairs.map { Field(name: $0.0, value: $0.1) }
    }

    /// A list holding `fields` in order.
    public init(fields: [Field]) { self.fields = fields }

    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { Field(name: $0.0, value: $0.1) }
    }

    /// Number of field lines.
    public var count: Int { fields.count }
    public var isEmpty: Bool { fields.isEmpty }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// The first value of the field called `name` (case-insensitive), or nil when there is none.
    public subscript(name: String) -> String? {
        for field in fields where HTTPHeaders.namesEqual(field.name, name) { return field.value }
        return nil
    }

    /// Every value of the field called `name` (case-insensitive), in order. Values are not split on commas.
    public func values(for name: String) -> [String] {
        fields.compactMap { HTTPHeaders.namesEqual($0.name, name) ? $0.value : nil }
    }

    /// Whether at least one field is called `name` (case-insensitive).
    public func contains(_ name: String) -> Bool {
        fields.contains { HTTPHeaders.namesEqual($0.name, name) }
    }

    /// Reserves room for `minimumCapacity` field lines (a parser knows roughly how many are coming).
    public mutating func reserveCapacity(_ minimumCapacity: Int) { fields.reserveCapacity(minimumCapacity) }

    /// Appends a field line, keeping any existing ones with the same name.
    public mutating func add(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Replaces every field called `name` with one line holding `value`, at the position of the first
    /// (or at the end when there was none).
    public mutating func replaceOrAdd(name: String, value: String) {
        guard let first = fields.firstIndex(where: { HTTPHeaders.namesEqual($0.name, name) }) else {
            fields.append(Field(name: name, value: value))
            return
        }
        fields[first] = Field(name: name, value: value)
        var i = fields.index(after: first)
        while i < fields.endIndex {
            if HTTPHeaders.namesEqual(fields[i].name, name) { fields.remove(at: i) } else { i += 1 }
        }
    }

    /// Removes every field called `name` (case-insensitive).
    public mutating func remove(name: String) {
        fields.removeAll { HTTPHeaders.namesEqual($0.name, name) }
    }

    /// The first field whose name is not a token or whose value holds CR, LF or NUL, if any.
    public var firstInvalidField: Field? {
        fields.first { !HTTPHeaders.isValidName($0.name) || !HTTPHeaders.isValidValue($0.value) }
    }

    public var description: String { fields.map(\.description).joined(separator: "\n") }

    // MARK: - Validation

    /// True when `name` is an RFC 9110 §5.1 field name: a non-empty `token`.
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy(HTTPMethod.isTokenCharacter)
    }

    /// True when `value` can be written on a field line without changing the message's framing:
    /// it holds no CR, LF or NUL (RFC 9110 §5.5). Other bytes are left to the sender's judgement.
    public static func isValidValue(_ value: String) -> Bool {
        !value.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }
    }

    /// ASCII case-insensitive comparison of two field names.
    public static func namesEqual(_ a: String, _ b: String) -> Bool {
        let x = a.utf8
        let y = b.utf8
        guard x.count == y.count else { return false }
        for (p, q) in zip(x, y) where p != q {
            guard p | 0x20 == q | 0x20, (p | 0x20) >= UInt8(ascii: "a"), (p | 0x20) <= UInt8(ascii: "z") else {
                return false
            }
        }
        return true
    }
}
