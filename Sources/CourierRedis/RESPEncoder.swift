/// Writes RESP: commands as a client sends them (an array of bulk strings), and any ``RESPValue`` as a server
/// would (for fake servers in tests and the fuzzer's round trip).
package enum RESPEncoder {
    /// `*n\r\n` then each argument as `$len\r\nbytes\r\n`, appended to `output`.
    package static func appendCommand(_ arguments: [[UInt8]], to output: inout [UInt8]) {
        appendHeader(UInt8(ascii: "*"), arguments.count, to: &output)
        for argument in arguments {
            appendBulk(UInt8(ascii: "$"), argument[...], to: &output)
        }
    }

    /// The bytes of one command.
    package static func command(_ arguments: [[UInt8]]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(16 + arguments.reduce(0) { $0 + $1.count + 16 })
        appendCommand(arguments, to: &output)
        return output
    }

    /// The bytes of `value`, as a server sends it. Nulls are written `$-1` (RESP2's form, which a RESP3 parser
    /// reads too). A simple string or error is written as given: one holding CR or LF does not parse back (the
    /// parser never returns one).
    package static func encode(_ value: RESPValue) -> [UInt8] {
        var output: [UInt8] = []
        append(value, to: &output)
        return output
    }

    /// Appends the bytes of `value` to `output`.
    package static func append(_ value: RESPValue, to output: inout [UInt8]) {
        switch value {
        case .simpleString(let text): appendLine(UInt8(ascii: "+"), text, to: &output)
        case .error(let message): appendLine(UInt8(ascii: "-"), message, to: &output)
        case .integer(let number): appendLine(UInt8(ascii: ":"), String(number), to: &output)
        case .bulkString(let bytes): appendBulk(UInt8(ascii: "$"), bytes[...], to: &output)
        case .null: output.append(contentsOf: Array("$-1\r\n".utf8))
        case .boolean(let flag): appendLine(UInt8(ascii: "#"), flag ? "t" : "f", to: &output)
        case .double(let number): appendLine(UInt8(ascii: ","), doubleText(number), to: &output)
        case .bigNumber(let digits): appendLine(UInt8(ascii: "("), digits, to: &output)
        case .blobError(let bytes): appendBulk(UInt8(ascii: "!"), bytes[...], to: &output)
        case .verbatimString(let format, let text):
            appendBulk(UInt8(ascii: "="), (Array(format.utf8) + [UInt8(ascii: ":")] + text)[...], to: &output)
        case .array(let elements): appendAggregate(UInt8(ascii: "*"), elements, to: &output)
        case .set(let elements): appendAggregate(UInt8(ascii: "~"), elements, to: &output)
        case .push(let elements): appendAggregate(UInt8(ascii: ">"), elements, to: &output)
        case .map(let entries):
            appendHeader(UInt8(ascii: "%"), entries.count, to: &output)
            for entry in entries {
                append(entry.key, to: &output)
                append(entry.value, to: &output)
            }
        }
    }

    private static func doubleText(_ number: Double) -> String {
        if number.isNaN { return "nan" }
        if number.isInfinite { return number < 0 ? "-inf" : "inf" }
        return "\(number)"
    }

    private static func appendAggregate(_ type: UInt8, _ elements: [RESPValue], to output: inout [UInt8]) {
        appendHeader(type, elements.count, to: &output)
        for element in elements { append(element, to: &output) }
    }

    private static func appendHeader(_ type: UInt8, _ count: Int, to output: inout [UInt8]) {
        appendLine(type, String(count), to: &output)
    }

    private static func appendBulk(_ type: UInt8, _ bytes: ArraySlice<UInt8>, to output: inout [UInt8]) {
        appendHeader(type, bytes.count, to: &output)
        output.append(contentsOf: bytes)
        output.append(0x0D)
        output.append(0x0A)
    }

    private static func appendLine(_ type: UInt8, _ text: String, to output: inout [UInt8]) {
        output.append(type)
        output.append(contentsOf: text.utf8)
        output.append(0x0D)
        output.append(0x0A)
    }
}
