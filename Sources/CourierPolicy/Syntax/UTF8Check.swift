/// Finds the first invalid UTF-8 sequence, as a 1-based line and column (columns count characters).
enum UTF8Check {
    static func firstInvalid(_ bytes: [UInt8]) -> (line: Int, column: Int)? {
        // Fast path: the standard library validates in bulk.
        if String(validating: bytes, as: UTF8.self) != nil { return nil }
        var line = 1
        var column = 1
        var i = 0
        let n = bytes.count
        while i < n {
            let b = bytes[i]
            let length: Int
            switch b {
            case 0x00...0x7F: length = 1
            case 0xC2...0xDF: length = 2
            case 0xE0...0xEF: length = 3
            case 0xF0...0xF4: length = 4
            default: return (line, column)
            }
            guard i + length <= n else { return (line, column) }
            if length > 1 {
                guard String(validating: bytes[i..<(i + length)], as: UTF8.self) != nil else { return (line, column) }
            }
            if b == 0x0A {
                line += 1
                column = 1
            } else {
                column += 1
            }
            i += length
        }
        return (line, column)
    }
}
