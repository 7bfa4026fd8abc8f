internal import Foundation

/// Where one URL's output (the `-i` head, then the body) goes: its `-o` file or standard output.
struct BodyDestination: Sendable {
    enum Target: Sendable {
        case standardOutput
        case file(OutputFile)
    }

    /// The file (or standard output). Only one URL writes to a target at a time: a shared one is either written
    /// by URLs running one after another, or buffered.
    let target: Target
    /// Whether the output is held in memory and written when every URL before it is done. True when the target
    /// is shared with other URLs (standard output, or a file given to `-o` more than once) and URLs run in
    /// parallel, so outputs come out in the order the URLs were given, never interleaved.
    let buffered: Bool

    /// Writes `bytes` to the target now. A failed write to standard output (a full disk behind a redirection) is
    /// said on standard error and remembered, as a failed `-o` file is.
    func write(_ bytes: some Collection<UInt8>) {
        guard !bytes.isEmpty else { return }
        switch target {
        case .standardOutput:
            guard !StandardOutputFailure.happened else { return }
            do {
                try FileHandle.standardOutput.write(contentsOf: Data(bytes))
            } catch {
                StandardOutputFailure.record("courier fetch: writing to standard output failed: \(OutputFile.reason(error))")
            }
        case .file(let file): file.write(bytes)
        }
    }

    /// Whether some output for this destination could not be written (curl's exit 23).
    var hasFailed: Bool {
        switch target {
        case .standardOutput: return StandardOutputFailure.happened
        case .file(let file): return file.hasFailed
        }
    }

    /// Settles the target once a URL's output is all written: an `-o` file is created (empty) for a transfer
    /// that completed with nothing in it.
    func finish(_ end: FetchOutcome.End) {
        if end == .complete, case .file(let file) = target { file.create() }
    }
}
