/// RFC 9110 §5.6.2's `token`: one or more `tchar`. Methods, field names, `Connection` options, transfer and
/// content codings and cache directives are tokens; this is the one place Courier says which bytes a token holds.
///
///     tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`" / "|" / "~"
///           / DIGIT / ALPHA
///
/// The rule is a 128-bit set held in two 64-bit constants: a check is a shift and a mask, with no table to load,
/// so the response parser can call it for every byte of every field name. Bytes 0x80-0xFF are never `tchar`.
///
/// Public and `@inlinable` for speed, not for users: Swift 6.3 does not inline a `package` function into another
/// module, even `@inlinable @inline(__always)`, and the call per name byte made a typical response head 15-20 %
/// slower to parse (release build, a 9-field nginx head: about 600 ns against 500 ns).
public enum HTTPToken {
    /// Whether `byte` is a `tchar`. The constants are literals in the body (not stored properties) so that the
    /// check inlines into other modules without a global's accessor: bytes 0-63 that are `tchar` (`!`, `#`-`'`,
    /// `*`, `+`, `-`, `.`, `0`-`9`), then bytes 64-127 (`A`-`Z`, `^`, `_`, `` ` ``, `a`-`z`, `|`, `~`).
    @inlinable @inline(__always)
    public static func isTokenCharacter(_ byte: UInt8) -> Bool {
        if byte < 64 { return (0x03FF_6CFA_0000_0000 as UInt64) >> UInt64(byte) & 1 == 1 }
        if byte < 128 { return (0x57FF_FFFF_C7FF_FFFE as UInt64) >> UInt64(byte &- 64) & 1 == 1 }
        return false
    }

    /// Whether `bytes` are a token: at least one byte, every one a `tchar`.
    @inlinable
    public static func isToken(_ bytes: some Sequence<UInt8>) -> Bool {
        var empty = true
        for byte in bytes {
            guard isTokenCharacter(byte) else { return false }
            empty = false
        }
        return !empty
    }

    /// Whether `text`'s UTF-8 bytes are a token (a token is ASCII, so any other character fails).
    @inlinable
    public static func isToken(_ text: some StringProtocol) -> Bool { isToken(text.utf8) }
}
