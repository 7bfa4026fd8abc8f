internal import CourierCore

/// `-O`'s file name for a URL, by curl's rule: the last segment of the URL's path (the query and fragment left
/// out), as written, in the current directory. A URL whose path ends in `/` (or has none) names no file:
/// refused, as curl refuses it, with curl's exit status 23.
enum RemoteName {
    static func fileName(_ url: String) throws -> String {
        // A URL that does not parse is left to the fetch, which reports it; '-' keeps it off every file.
        guard let parsed = FetchURL.parse(url), parsed.hasAuthority else { return "-" }
        let name = parsed.path.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        guard !name.isEmpty, name != ".", name != ".." else {
            throw CommandFailure(
                "courier fetch: -O: '\(url)' has no file name at the end of its path; give -o FILE for it",
                status: FetchExitCode.writeError
            )
        }
        return String(name)
    }
}
