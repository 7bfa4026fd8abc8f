import Foundation

/// Paths into `Tests/CourierLintTests/Fixtures` and the repository, found relative to this source file.
enum Fixtures {
    static let directory = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "Fixtures").path
    static let repositoryRoot = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    static func path(_ relative: String) -> String { directory + "/" + relative }
}
