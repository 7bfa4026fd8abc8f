internal import ArgumentParser

/// `courier fetch -C/--continue-at`, curl's: continue a download at a byte offset, or (`-C -`) where the `-o` file
/// ends. The request asks for the rest (`Range: bytes=N-`); a `206` that starts at N is appended to the file.
struct ResumeOptions: ParsableArguments {
    @Option(
        name: [.customShort("C"), .customLong("continue-at")],
        help: ArgumentHelp(
            "Continue at byte OFFSET ('-': the -o file's size), appending to the -o file; exit 33 when the server does not send that range.",
            valueName: "offset"
        )
    )
    var continueAt: String?

    /// Where each URL's download continues.
    enum Offset: Equatable, Sendable {
        /// Where its `-o` file ends (0 when it does not exist: the whole body).
        case fileSize
        case at(Int64)
    }

    var offset: Offset? {
        guard let continueAt else { return nil }
        return continueAt == "-" ? .fileSize : Int64(continueAt).map { .at($0) }
    }

    /// Checked with the other options: `-C -` needs a file to measure (`hasFiles`: every URL has an `-o` file or `-O`).
    func validate(hasFiles: Bool) throws {
        guard let continueAt else { return }
        guard let offset else { throw ValidationError("-C takes a byte offset, 0 or more, or '-', not '\(continueAt)'") }
        if case .at(let n) = offset, n < 0 { throw ValidationError("-C takes a byte offset, 0 or more, or '-', not '\(continueAt)'") }
        if offset == .fileSize, !hasFiles {
            throw ValidationError("-C - continues the -o file where it ends: give every URL an -o FILE (or -O)")
        }
    }
}
