/// The exit status contract of `courier lint` (and of the other `courier` commands).
package enum LintExitStatus: Int32, Hashable, Sendable, CaseIterable {
    /// No errors (warnings allowed unless `--strict`).
    case success = 0
    /// At least one error, or at least one warning under `--strict`.
    case failure = 1
    /// A usage error (bad option, missing argument) or an I/O error (a path that does not exist).
    case usageOrIOError = 2
}
