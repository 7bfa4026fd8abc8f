/// An ordered list of HTTP fields (RFC 9110 §5): names are compared case-insensitively, order and
/// repetition are kept exactly as they were added or received.
///
/// The fields are stored as bytes in one buffer (names and values back to back, plus their offsets), so a parser
/// adds a field with two copies and no `String`; a `String` is made only when a name or value is read.
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

    /// Where one field's name and value lie in `storage`.
    private struct Entry: Hashable, Sendable {
        var nameStart: UInt32
        var nameEnd: UInt32
        var valueStart: UInt32
        var valueEnd: UInt32
    }

    private var storage: [UInt8]
    private var entries: [Entry]

    /// An empty list.
    public init() {
        storage = []
        entries = []
    }

    /// A list holding `pairs` in order (repeated names are kept).
    public init(_ pairs: [(String, String)]) {
        self.init()
        for (name, value) in pairs { add(name: name, value: value) }
    }

    /// A list holding `fields` in order.
    public init(fields: [Field]) {
        self.init()
        for field in fields { add(name: field.name, value: field.value) }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The fields, in order (each name and value is made into a `String` here).
    public var fields: [Field] { entries.map(field) }

    /// Number of field lines.
    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }

    public struct Iterator: IteratorProtocol {
        private let headers: HTTPHeaders
        private var index = 0

        fileprivate init(_ headers: HTTPHeaders) { self.headers = headers }

        public mutating func next() -> Field? {
            guard index < headers.entries.count else { return nil }
            defer { index += 1 }
            return headers.field(headers.entries[index])
        }
    }

    public func makeIterator() -> Iterator { Iterator(self) }

    /// The first value of the field called `name` (case-insensitive), or nil when there is none.
    public subscript(name: String) -> String? {
        guard let entry = entries.first(where: { matches($0, name) }) else { return nil }
        return string(entry.valueStart, entry.valueEnd)
    }

    /// Every value of the field called `name` (case-insensitive), in order. Values are not split on commas.
    public func values(for name: String) -> [String] {
        entries.compactMap { matches($0, name) ? string($0.valueStart, $0.valueEnd) : nil }
    }

    /// The comma-separated tokens of every `name` field (RFC 9110 §5.6.1 lists), lower-cased, without the
    /// optional whitespace around them and without empty elements: `Connection: keep-alive, Close` gives
    /// `["keep-alive", "close"]`.
    package func tokens(for name: String) -> [String] {
        // Split over bytes (HTTPList), not Characters: a comma before a combining mark still ends an element.
        values(for: name).flatMap { HTTPList.elements(of: $0).map { $0.lowercased() } }
    }

    /// Whether at least one field is called `name` (case-insensitive).
    public func contains(_ name: String) -> Bool {
        entries.contains { matches($0, name) }
    }

    /// Reserves room for `fieldCount` field lines holding `byteCount` bytes of names and values.
    package mutating func reserveCapacity(fields fieldCount: Int, bytes byteCount: Int) {
        entries.reserveCapacity(fieldCount)
        storage.reserveCapacity(byteCount)
    }

    /// Reserves room for `fieldCount` more field lines holding `byteCount` more bytes of names and values: one
    /// growth for fields added together (each `add` to a full list grew the field list and the bytes once more).
    package mutating func reserveCapacity(adding fieldCount: Int, bytes byteCount: Int) {
        entries.reserveCapacity(entries.count + fieldCount)
        storage.reserveCapacity(storage.count + byteCount)
    }

    /// Appends a field line, keeping any existing ones with the same name.
    public mutating func add(name: String, value: String) {
        makeRoom(forBytes: name.utf8.count + value.utf8.count)
        let nameStart = UInt32(storage.count)
        storage.append(contentsOf: name.utf8)
        let valueStart = UInt32(storage.count)
        storage.append(contentsOf: value.utf8)
        entries.append(Entry(nameStart: nameStart, nameEnd: valueStart, valueStart: valueStart, valueEnd: UInt32(storage.count)))
    }

    /// Appends a field line from raw bytes (a parser's fast path: no `String` is made). The bytes are stored as
    /// given; the caller has validated them.
    package mutating func add(nameBytes: UnsafeBufferPointer<UInt8>, valueBytes: UnsafeBufferPointer<UInt8>) {
        makeRoom(forBytes: nameBytes.count + valueBytes.count)
        let nameStart = UInt32(storage.count)
        storage.append(contentsOf: nameBytes)
        let valueStart = UInt32(storage.count)
        storage.append(contentsOf: valueBytes)
        entries.append(Entry(nameStart: nameStart, nameEnd: valueStart, valueStart: valueStart, valueEnd: UInt32(storage.count)))
    }

    /// Grows the storage once for a field's name and value together (appending them one by one grew it twice
    /// for the first field), keeping the array's doubling so that many fields still cost amortised linear time.
    private mutating func makeRoom(forBytes count: Int) {
        let needed = storage.count + count
        if needed > storage.capacity { storage.reserveCapacity(Swift.max(needed, 2 * storage.capacity)) }
    }

    /// Continues the last field's value with one SP and `bytes`: a parser replacing an obs-fold with SP (RFC 9112
    /// §5.2). The SP is left out where it would be whitespace around the value: when `bytes` or the value so far
    /// is empty. The bytes are stored as given; the caller has validated them. There must be a field to continue.
    package mutating func continueLastValue(with bytes: UnsafeBufferPointer<UInt8>) {
        precondition(!entries.isEmpty, "continueLastValue(with:) needs a field to continue")
        guard !bytes.isEmpty else { return }
        // Fields are stored in order (every change appends or rebuilds), so the last value ends the storage.
        let last = entries[entries.count - 1]
        if last.valueEnd > last.valueStart { storage.append(UInt8(ascii: " ")) }
        storage.append(contentsOf: bytes)
        entries[entries.count - 1].valueEnd = UInt32(storage.count)
    }

    /// Calls `body` with the last field's value bytes; nil when there is no field.
    package func withLastValue<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
        guard let last = entries.last else { return nil }
        return storage.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[Int(last.valueStart)..<Int(last.valueEnd)])) }
    }

    /// Replaces every field called `name` with one line holding `value`, at the position of the first
    /// (or at the end when there was none).
    public mutating func replaceOrAdd(name: String, value: String) {
        guard entries.contains(where: { matches($0, name) }) else {
            add(name: name, value: value)
            return
        }
        var result = HTTPHeaders()
        var replaced = false
        for entry in entries {
            if matches(entry, name) {
                if !replaced { result.add(name: name, value: value) }
                replaced = true
            } else {
                result.copy(entry, from: self)
            }
        }
        self = result
    }

    /// Removes every field called `name` (case-insensitive).
    public mutating func remove(name: String) {
        guard entries.contains(where: { matches($0, name) }) else { return }
        var result = HTTPHeaders()
        for entry in entries where !matches(entry, name) { result.copy(entry, from: self) }
        self = result
    }

    /// Calls `body` with each field's name and value bytes, in order, without making any `String`.
    package func forEachField<E: Error>(
        _ body: (_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) throws(E) -> Void
    ) throws(E) {
        var failure: E?
        storage.withUnsafeBufferPointer { bytes in
            for entry in entries {
                do throws(E) {
                    try body(
                        UnsafeBufferPointer(rebasing: bytes[Int(entry.nameStart)..<Int(entry.nameEnd)]),
                        UnsafeBufferPointer(rebasing: bytes[Int(entry.valueStart)..<Int(entry.valueEnd)])
                    )
                } catch {
                    failure = error
                    return
                }
            }
        }
        if let failure { throw failure }
    }

    /// The first field whose name is not a token or whose value holds CR, LF or NUL, if any. Checked on the
    /// stored bytes: a `String` is made only for the field returned (the transport asks this of every request).
    package var firstInvalidField: Field? {
        let bad = storage.withUnsafeBufferPointer { bytes in
            entries.first { entry in
                let name = UnsafeBufferPointer(rebasing: bytes[Int(entry.nameStart)..<Int(entry.nameEnd)])
                let value = UnsafeBufferPointer(rebasing: bytes[Int(entry.valueStart)..<Int(entry.valueEnd)])
                return !Self.isValidName(bytes: name) || !Self.isValidValue(bytes: value)
            }
        }
        return bad.map(field)
    }

    public var description: String { fields.map(\.description).joined(separator: "\n") }

    // MARK: - Equality

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        guard lhs.entries.count == rhs.entries.count else { return false }
        for (a, b) in zip(lhs.entries, rhs.entries) {
            guard lhs.storage[Int(a.nameStart)..<Int(a.valueEnd)] == rhs.storage[Int(b.nameStart)..<Int(b.valueEnd)],
                a.nameEnd - a.nameStart == b.nameEnd - b.nameStart
            else { return false }
        }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(entries.count)
        for entry in entries {
            hasher.combine(entry.nameEnd - entry.nameStart)
            hasher.combine(entry.valueEnd - entry.valueStart)
            for byte in storage[Int(entry.nameStart)..<Int(entry.valueEnd)] { hasher.combine(byte) }
        }
    }

    // MARK: - Storage helpers

    private func field(_ entry: Entry) -> Field {
        Field(name: string(entry.nameStart, entry.nameEnd), value: string(entry.valueStart, entry.valueEnd))
    }

    private func string(_ start: UInt32, _ end: UInt32) -> String {
        storage.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[Int(start)..<Int(end)]), as: UTF8.self) }
    }

    /// Whether `entry`'s name equals `name`, ignoring ASCII case.
    private func matches(_ entry: Entry, _ name: String) -> Bool {
        let length = Int(entry.nameEnd - entry.nameStart)
        guard name.utf8.count == length else { return false }
        return storage.withUnsafeBufferPointer { bytes in
            let stored = UnsafeBufferPointer(rebasing: bytes[Int(entry.nameStart)..<Int(entry.nameEnd)])
            let fast = name.utf8.withContiguousStorageIfAvailable { HTTPHeaders.bytesEqualIgnoringCase(stored, $0) }
            return fast ?? HTTPHeaders.bytesEqualIgnoringCase(stored, Array(name.utf8))
        }
    }

    private mutating func copy(_ entry: Entry, from other: HTTPHeaders) {
        other.storage.withUnsafeBufferPointer { bytes in
            add(
                nameBytes: UnsafeBufferPointer(rebasing: bytes[Int(entry.nameStart)..<Int(entry.nameEnd)]),
                valueBytes: UnsafeBufferPointer(rebasing: bytes[Int(entry.valueStart)..<Int(entry.valueEnd)])
            )
        }
    }

    // MARK: - Validation

    /// True when `name` is an RFC 9110 §5.1 field name: a non-empty `token`.
    public static func isValidName(_ name: String) -> Bool {
        var name = name
        return name.withUTF8(isValidName(bytes:))
    }

    /// ``isValidName(_:)`` for a name's UTF-8 bytes (the rule itself; encoders check stored bytes with it).
    package static func isValidName(bytes name: UnsafeBufferPointer<UInt8>) -> Bool {
        HTTPToken.isToken(name)
    }

    /// True when `value` can be written on a field line without changing the message's framing:
    /// it holds no CR, LF or NUL (RFC 9110 §5.5). Other bytes are left to the sender's judgement.
    public static func isValidValue(_ value: String) -> Bool {
        var value = value
        return value.withUTF8(isValidValue(bytes:))
    }

    /// ``isValidValue(_:)`` for a value's UTF-8 bytes (the rule itself).
    package static func isValidValue(bytes value: UnsafeBufferPointer<UInt8>) -> Bool {
        !value.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }
    }

    /// ASCII case-insensitive comparison of two field names.
    package static func namesEqual(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        let fast = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in bytesEqualIgnoringCase(x, y) }
        }
        if let result = fast ?? nil { return result }
        return bytesEqualIgnoringCase(Array(a.utf8), Array(b.utf8))
    }

    private static func bytesEqualIgnoringCase(
        _ x: some RandomAccessCollection<UInt8>,
        _ y: some RandomAccessCollection<UInt8>
    ) -> Bool {
        guard x.count == y.count else { return false }
        for (p, q) in zip(x, y) where p != q {
            let lower = p | 0x20
            guard lower == q | 0x20, lower >= UInt8(ascii: "a"), lower <= UInt8(ascii: "z") else { return false }
        }
        return true
    }
}
