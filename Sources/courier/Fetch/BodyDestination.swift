import Foundation

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

    /// Writes `bytes` to the target now.
    func write(_ bytes: some Collection<UInt8>) {
        guard !bytes.isEmpty else { return }
        switch target {
        case .standardOutput: FileHandle.standardOutput.write(Data(bytes))
        case .file(let file): file.write(bytes)
        }
    }

    /// Settles the target once a URL's output is all written: an `-o` file is created (empty) for a transfer
    /// that completed with nothing in it.
    func finish(_ end: FetchOutcome.End) {
        if end == .complete, case .file(let file) = target { file.create() }
    }
}
