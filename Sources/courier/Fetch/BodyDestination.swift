import Foundation

/// Where one URL's output (the `-i` head, then the body) goes: its `-o` file or standard output.
struct BodyDestination: Sendable {
    /// The file (or standard output). Only one URL writes to a handle at a time: a shared handle is either
    /// written by URLs running one after another, or buffered.
    let handle: FileHandle
    /// Whether the output is held in memory and written when every URL before it is done. True when the handle
    /// is shared with other URLs (standard output, or a file given to `-o` more than once) and URLs run in
    /// parallel, so outputs come out in the order the URLs were given, never interleaved.
    let buffered: Bool
}

/// Writes one URL's output to its destination, or keeps it for later when the destination is buffered.
final class BodyWriter {
    let destination: BodyDestination
    /// What was kept (buffered destinations only).
    private(set) var kept: [UInt8] = []

    init(_ destination: BodyDestination) {
        self.destination = destination
    }

    func write(_ bytes: some Collection<UInt8>) {
        guard !bytes.isEmpty else { return }
        if destination.buffered {
            kept.append(contentsOf: bytes)
        } else {
            destination.handle.write(Data(bytes))
        }
    }
}
