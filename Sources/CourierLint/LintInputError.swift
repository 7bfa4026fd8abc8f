/// Why `courier lint` could not even start linting: a path that does not exist or cannot be read. These are
/// usage or I/O errors (exit status 2), unlike diagnostics, which are findings about a policy's content.
package struct LintInputError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    package enum Kind: String, Hashable, Sendable {
        /// The path does not exist.
        case missingPath = "missing-path"
        /// The path exists but could not be listed or read.
        case unreadable
        /// No path was given.
        case noPaths = "no-paths"
        /// The paths exist but hold no policy file (e.g. an empty directory): a CI job pointed at the wrong
        /// folder must not pass silently.
        case noPolicyFiles = "no-policy-files"
    }

    /// What went wrong.
    package var kind: Kind
    /// The path the user gave (empty for ``Kind/noPaths``).
    package var path: String
    /// Extra detail from the file system, if any.
    package var detail: String?

    /// An input error of `kind` about `path`.
    package init(_ kind: Kind, path: String, detail: String? = nil) {
        self.kind = kind
        self.path = path
        self.detail = detail
    }

    /// A one-line message for standard error.
    package var description: String {
        switch kind {
        case .missingPath: return "no such file or directory: '\(path)'"
        case .unreadable: return "cannot read '\(path)'" + (detail.map { ": \($0)" } ?? "")
        case .noPaths: return "no policy file or directory given"
        case .noPolicyFiles: return "no *.yaml or *.yml file in '\(path)'"
        }
    }
}
