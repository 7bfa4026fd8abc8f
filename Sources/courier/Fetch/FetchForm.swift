internal import CourierCore
internal import CourierKit

/// `courier fetch -F`: a `multipart/form-data` body built as curl builds it from its `-F` options.
enum FetchForm {
    /// One `-F` option: `name=value` (a text field), `name=@FILE` (the file, streamed as it is sent), `name=<FILE`
    /// (the file's contents as a text field), each optionally followed by `;type=MIME` and, for `@`,
    /// `;filename=NAME`. A value that starts with `@` or `<` but names no file is read as such: curl's habit.
    struct Item: Equatable {
        enum Content: Equatable {
            case text(String)
            case file(path: String)
            case fileText(path: String)
        }

        var name: String
        var content: Content
        var type: String?
        var filename: String?

        /// Parses one option's text; nil when it has no `name=`.
        init?(_ text: String) {
            guard let equals = text.firstIndex(of: "="), equals != text.startIndex else { return nil }
            name = String(text[..<equals])
            let rest = String(text[text.index(after: equals)...])
            guard rest.hasPrefix("@") || rest.hasPrefix("<") else {
                content = .text(rest)
                return
            }
            // After a file: `;type=` and `;filename=` (curl's names); anything else stays in the path.
            var fields = rest.dropFirst().split(separator: ";", omittingEmptySubsequences: false).map(String.init)
            var path = fields.removeFirst()
            for field in fields {
                if field.hasPrefix("type=") {
                    type = String(field.dropFirst(5))
                } else if field.hasPrefix("filename=") {
                    filename = String(field.dropFirst(9))
                } else {
                    path += ";" + field
                }
            }
            content = rest.hasPrefix("@") ? .file(path: path) : .fileText(path: path)
        }
    }

    /// The form of `options` (in order), with its files measured now: a missing or unreadable file is an error
    /// naming it before any request is sent.
    static func make(_ options: [String]) throws -> MultipartFormData? {
        guard !options.isEmpty else { return nil }
        var form = MultipartFormData()
        for option in options {
            guard let item = Item(option) else {
                throw CommandFailure("courier fetch: -F takes name=value, name=@FILE or name=<FILE, not '\(option)'")
            }
            switch item.content {
            case .text(let value):
                if let type = item.type {
                    form.append(Array(value.utf8), name: item.name, contentType: type)
                } else {
                    form.append(value, name: item.name)
                }
            case .file(let path):
                do {
                    try form.appendFile(at: path, name: item.name, filename: item.filename, contentType: item.type)
                } catch {
                    throw CommandFailure("courier fetch: -F \(item.name): \(error)")
                }
            case .fileText(let path):
                form.append(try FetchBody.read(path), name: item.name, contentType: item.type)
            }
        }
        return form
    }
}
