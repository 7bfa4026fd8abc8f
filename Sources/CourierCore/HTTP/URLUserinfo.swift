/// The userinfo of a URL's text (`user:password@` between `://` and the host), found without parsing the rest: so
/// that a URL that is refused, or whose credentials are taken apart, is never quoted with its password.
package enum URLUserinfo {
    /// Where the userinfo starts (just after `://`) and where its `@` is, if the text has one: the last `@` before
    /// the authority ends (at the first `/`, `?` or `#`).
    package static func range(in text: String) -> (start: String.Index, at: String.Index)? {
        guard let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://") else { return nil }
        let start = text.index(colon, offsetBy: 3)
        let end = text[start...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? text.endIndex
        guard let at = text[start..<end].lastIndex(of: "@") else { return nil }
        return (start, at)
    }

    /// `text` with its userinfo replaced by `***` (`http://***@host/`), for error messages; unchanged without one.
    package static func redacted(_ text: String) -> String {
        guard let (start, at) = range(in: text) else { return text }
        return String(text[..<start]) + "***" + String(text[at...])
    }
}
