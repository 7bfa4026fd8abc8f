/// What became of one URL, for the runner to write out in the order the URLs were given.
struct FetchOutcome: Sendable {
    /// How a URL's transfer ended, for what its `-o` file keeps.
    enum End: Sendable, Equatable {
        /// A response was delivered: its output stays, and an `-o` file is created even for an empty body.
        case complete
        /// A response with nothing to write (`--fail` refused it, or a 304): no `-o` file is created.
        case nothingToWrite
        /// No response or a body cut short: what the URL wrote to its `-o` file is undone.
        case failed
    }

    /// The `--json-report` line.
    var report: FetchReport
    /// 0, or the exit status this URL asks for (the run exits with the first non-zero one in URL order).
    var exitStatus: Int32
    var end: End
    /// Output kept in memory for a buffered destination (written by the runner in URL order).
    var keptOutput: [UInt8] = []
    /// Messages for standard error, one line each (written in URL order too).
    var messages: [String] = []
}
