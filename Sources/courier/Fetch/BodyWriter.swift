/// Writes one URL's output to its destination, or keeps it for later when the destination is buffered.
final class BodyWriter {
    let destination: BodyDestination
    /// What was kept (buffered destinations only).
    private(set) var kept: [UInt8] = []
    /// Where this URL's first byte went in its `-o` file (unbuffered files only, once it wrote one).
    private var start: OutputFile.Mark?

    init(_ destination: BodyDestination) {
        self.destination = destination
    }

    func write(_ bytes: some Collection<UInt8>) {
        guard !bytes.isEmpty else { return }
        if destination.buffered {
            kept.append(contentsOf: bytes)
            return
        }
        if start == nil, case .file(let file) = destination.target { start = file.mark() }
        destination.write(bytes)
    }

    /// Undoes this URL's output in its `-o` file when its transfer failed (a timeout or a broken connection
    /// mid-body): no partial body is left behind. Standard output keeps what was written, as with curl.
    func finish(_ end: FetchOutcome.End) {
        guard end == .failed, case .file(let file) = destination.target else { return }
        kept = []
        if let start { file.rollBack(to: start) }
    }
}
