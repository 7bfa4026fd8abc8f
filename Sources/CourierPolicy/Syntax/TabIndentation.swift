/// A tab in a line's indentation: YAML forbids it (YAML 1.2 §6.1), and libyaml says only "found character that
/// cannot start any token", or something further on. ``YAMLComposer`` looks for one where libyaml's error is,
/// to say what is wrong and point at the tab.
enum TabIndentation {
    /// The 1-based line and column of the first tab in the indentation of line `line` or of the line before it
    /// (libyaml reports some of them at the next token), or nil. Only whitespace before a line's first other
    /// character is indentation; a tab after it (between a key and its value) is allowed.
    static func find(in bytes: UnsafeBufferPointer<UInt8>, near line: Int) -> (line: Int, column: Int)? {
        var current = 1
        var column = 1
        var indenting = true
        var found: (line: Int, column: Int)?
        for byte in bytes {
            if current > line { break }
            if byte == UInt8(ascii: "\n") {
                current += 1
                column = 1
                indenting = true
                continue
            }
            if indenting {
                if byte == UInt8(ascii: "\t"), current >= line - 1 {
                    found = (current, column)
                    // On the error's own line, the first such tab is the one.
                    if current == line { return found }
                    indenting = false
                } else if byte != UInt8(ascii: " ") {
                    indenting = false
                }
            }
            column += 1
        }
        return found
    }
}
