internal import FoundationEssentials

/// Expands the paths given to `courier lint` into the policy files to lint.
///
/// A directory stands for every `*.yaml` and `*.yml` file below it, at any depth, sorted by path; a file
/// stands for itself whatever its extension. Each file appears once, in the order first reached. Paths keep
/// the spelling the user gave (`policies/` yields `policies/app.yaml`), so diagnostics read naturally.
/// Symbolic links to directories are not followed, so a link cycle cannot make the search loop.
package struct PolicyFileFinder: Sendable {
    /// File-name extensions that mark a policy file inside a directory (compared case-insensitively).
    package static let extensions: Set<String> = ["yaml", "yml"]

    /// A finder with the standard extensions.
    package init() {}

    /// The files `paths` stand for; throws for a path that does not exist, a directory that cannot be read, or
    /// paths that hold no policy file at all.
    package func files(for paths: [String]) throws(LintInputError) -> [String] {
        guard !paths.isEmpty else { throw LintInputError(.noPaths, path: "") }
        var seen = Set<String>()
        var result: [String] = []
        for path in paths {
            for file in try expand(path) where seen.insert(PathRelativizer.clean(file)).inserted {
                result.append(file)
            }
        }
        guard !result.isEmpty else { throw LintInputError(.noPolicyFiles, path: paths.joined(separator: "', '")) }
        return result
    }

    private func expand(_ path: String) throws(LintInputError) -> [String] {
        let fileManager = FileManager.default
        var isDirectory = false
        guard !path.isEmpty, fileManager.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw LintInputError(.missingPath, path: path)
        }
        guard isDirectory else { return [path] }
        guard fileManager.isReadableFile(atPath: path) else {
            throw LintInputError(.unreadable, path: path, detail: "permission denied")
        }
        let relativePaths: [String]
        do {
            relativePaths = try fileManager.subpathsOfDirectory(atPath: path)
        } catch {
            throw LintInputError(.unreadable, path: path, detail: String(describing: error))
        }
        let prefix = path.hasSuffix("/") ? path : path + "/"
        var files: [String] = []
        for relative in relativePaths {
            let name = relative.split(separator: "/").last.map(String.init) ?? relative
            guard let dot = name.lastIndex(of: "."), dot != name.startIndex,
                Self.extensions.contains(name[name.index(after: dot)...].lowercased())
            else { continue }
            let full = prefix + relative
            // Directories named like policy files are skipped; a dangling symbolic link is kept, so that the
            // compiler reports it as unreadable instead of it vanishing silently.
            var childIsDirectory = false
            if fileManager.fileExists(atPath: full, isDirectory: &childIsDirectory), childIsDirectory { continue }
            files.append(full)
        }
        return files.sorted()
    }
}
