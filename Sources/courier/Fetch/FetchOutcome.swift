/// What became of one URL, for the runner to write out in the order the URLs were given.
struct FetchOutcome: Sendable {
    /// The `--json-report` line.
    var report: FetchReport
    /// 0, or the exit status this URL asks for (the run exits with the first non-zero one in URL order).
    var exitStatus: Int32
    /// Output kept in memory for a buffered destination (written by the runner in URL order).
    var keptOutput: [UInt8] = []
    /// Messages for standard error, one line each (written in URL order too).
    var messages: [String] = []
}
