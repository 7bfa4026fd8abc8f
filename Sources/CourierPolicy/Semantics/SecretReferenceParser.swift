internal import CourierCore

/// Splits a setting string into literal text and `${env:NAME}` / `${file:path}` references.
///
/// `$${` stands for a literal `${`. A `file:` path is made absolute against the directory of the policy file
/// that says it.
enum SecretReferenceParser {
    /// Why a reference is malformed.
    struct Malformed: Error {
        var message: String
    }

    static func parse(_ text: String, relativeTo file: String) -> Result<PolicyString, Malformed> {
        guard text.contains("$") else { return .success(PolicyString(literal: text)) }
        var segments: [PolicyString.Segment] = []
        var literal = ""
        var rest = Substring(text)
        while let dollar = rest.firstIndex(of: "$") {
            literal += rest[..<dollar]
            let after = rest[rest.index(after: dollar)...]
            if after.hasPrefix("${") {  // escaped: "$${" is a literal "${"
                literal += "${"
                rest = after.dropFirst(2)
                continue
            }
            guard after.hasPrefix("{") else {
                literal += "$"
                rest = after
                continue
            }
            guard let close = after.firstIndex(of: "}") else {
                return .failure(Malformed(message: "unterminated reference '\(rest.abbreviated)': a '${' needs its closing '}'"))
            }
            let body = after[after.index(after: after.startIndex)..<close]
            guard let colon = body.firstIndex(of: ":") else {
                return .failure(Malformed(message: "malformed reference '${\(body.abbreviated)}': write ${env:NAME} or ${file:path}"))
            }
            let source = String(body[..<colon])
            let name = String(body[body.index(after: colon)...])
            switch source {
            case "env":
                guard let first = name.unicodeScalars.first, first == "_" || (first.isASCII && first.properties.isAlphabetic),
                    name.unicodeScalars.allSatisfy({ $0 == "_" || ($0.isASCII && $0.properties.isAlphabetic) || ("0"..."9").contains($0) })
                else {
                    return .failure(Malformed(message: name.isEmpty
                        ? "empty reference '${env:}': name the environment variable"
                        : "'\(name.abbreviated)' is not an environment variable name (letters, digits and '_', not starting with a digit)"))
                }
                segments.append(.secret(SecretReference(source: .env, name: name)))
            case "file":
                guard !name.isEmpty else { return .failure(Malformed(message: "empty reference '${file:}': name the file")) }
                let path = PolicyFileSystem.absolute(PolicyFileSystem.resolve(name, from: file))
                segments.append(.secret(SecretReference(source: .file, name: path)))
            default:
                return .failure(Malformed(message: "unknown reference source '\(source.abbreviated)' in '${\(body.abbreviated)}': use ${env:NAME} or ${file:path}"))
            }
            if !literal.isEmpty {
                segments.insert(.literal(literal), at: segments.count - 1)
                literal = ""
            }
            rest = after[after.index(after: close)...]
        }
        literal += rest
        if !literal.isEmpty { segments.append(.literal(literal)) }
        return .success(PolicyString(segments: segments))
    }
}
