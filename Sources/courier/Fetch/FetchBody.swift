internal import CourierCore
internal import Foundation

/// `courier fetch`'s request body, built from `-d` or `--data-binary` as curl builds it.
enum FetchBody {
    /// The `Content-Type` sent with a body unless `-H` gives one: curl's, for `-d` and `--data-binary` alike.
    static let defaultContentType = "application/x-www-form-urlencoded"

    /// curl's `-d`: each part is text sent as given, or `@FILE` (`@-`: standard input) whose contents are sent
    /// with every CR and LF removed; several parts are joined with `&`. Nil without parts.
    static func data(_ parts: [String]) throws -> [UInt8]? {
        try join(parts) { contents in contents.filter { $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\n") } }
    }

    /// curl's `--data-binary`: as `-d`, but the contents of `@FILE` are sent verbatim.
    static func binary(_ parts: [String]) throws -> [UInt8]? {
        try join(parts) { $0 }
    }

    private static func join(_ parts: [String], file transform: ([UInt8]) -> [UInt8]) throws -> [UInt8]? {
        guard !parts.isEmpty else { return nil }
        var body: [UInt8] = []
        for (index, part) in parts.enumerated() {
            if index > 0 { body.append(UInt8(ascii: "&")) }
            body += part.hasPrefix("@") ? transform(try read(String(part.dropFirst()))) : Array(part.utf8)
        }
        return body
    }

    /// The contents of `path`, or of standard input for `-` (`-d @FILE`, `-F name=<FILE`).
    static func read(_ path: String) throws -> [UInt8] {
        if path == "-" {
            // Not `FileHandle.readDataToEndOfFile()`: it stops the process when a signal interrupts its read.
            do { return try SystemCall.readToEnd(fileDescriptor: STDIN_FILENO) } catch {
                throw CommandFailure("courier fetch: cannot read standard input: \(error)")
            }
        }
        if let problem = FileAccess.readProblem(path) { throw CommandFailure("courier fetch: cannot read \(path): \(problem)") }
        guard let contents = FileManager.default.contents(atPath: path) else {
            throw CommandFailure("courier fetch: cannot read \(path): \(CommandFailure.reason())")
        }
        return Array(contents)
    }
}
