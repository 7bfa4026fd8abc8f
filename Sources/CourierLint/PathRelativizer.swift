/// Pure path arithmetic for reports: lexical, no file-system access (symbolic links are not resolved).
enum PathRelativizer {
    /// `path` relative to `directory` when it lies below it; otherwise `path` cleaned of `.` segments and
    /// doubled slashes. Relative paths are taken as relative to `directory` already.
    static func relative(_ path: String, to directory: String) -> String {
        let cleaned = clean(path)
        guard cleaned.hasPrefix("/") else { return cleaned }
        let base = clean(directory)
        let prefix = base.hasSuffix("/") ? base : base + "/"
        if cleaned.hasPrefix(prefix) { return String(cleaned.dropFirst(prefix.count)) }
        return cleaned
    }

    /// Removes `.` segments, empty segments and, lexically, `..` segments that follow a named segment.
    static func clean(_ path: String) -> String {
        let absolute = path.hasPrefix("/")
        var parts: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) where part != "." {
            if part == "..", let last = parts.last, last != ".." {
                parts.removeLast()
            } else if part == ".." && absolute && parts.isEmpty {
                continue
            } else {
                parts.append(part)
            }
        }
        let joined = parts.joined(separator: "/")
        if absolute { return "/" + joined }
        return joined.isEmpty ? "." : joined
    }
}
