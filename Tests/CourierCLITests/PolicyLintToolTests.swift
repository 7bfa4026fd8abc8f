import CourierTestSupport
import Foundation
import Testing

/// `courier-policy-lint`, the tool the `LintPoliciesOnBuild` build-tool plugin runs on every build: the same text
/// output as `courier lint` (SwiftPM shows those lines as the build's diagnostics), exit status 1 for errors, and
/// its declared output (the stamp) written only when there is none. The plugin itself is tested by CI, which
/// builds examples/lint-at-build-time with a clean and with a broken policy (.ci/run).
@Suite(.onBlockingThreads) struct PolicyLintToolTests {
    static let tool = CourierProcess.productsDirectory.appending(path: "courier-policy-lint")

    /// Where one test's stamp goes, in a scratch folder removed however the test ends.
    private static func withStamp(_ body: (URL) async throws -> Void) async throws {
        let scratch = FileManager.default.temporaryDirectory.appending(path: "policy-lint-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        try await body(scratch.appending(path: "CourierPolicyLint.swift"))
    }

    @Test func errorsPrintTheLintLinesExitOneAndRemoveTheStamp() async throws {
        try await Self.withStamp { stamp in
            try Data("// an earlier clean run\n".utf8).write(to: stamp)
            let r = try await CourierProcess.run(["--output", stamp.path, "--", "broken", "warn"], executable: Self.tool)
            #expect(r.status == 1)
            // Byte for byte what `courier lint broken warn` prints, which the compiler-shaped lines are.
            try GoldenFile.check(r.stdout, named: "lint-broken.text")
            #expect(r.stderr == "courier-policy-lint: 2 files: 3 errors, 1 warning\n")
            #expect(!FileManager.default.fileExists(atPath: stamp.path))
        }
    }

    @Test func warningsArePrintedAndTheStampIsWritten() async throws {
        try await Self.withStamp { stamp in
            let file = CourierProcess.fixtures.appending(path: "warn/pinned.yaml").path
            let r = try await CourierProcess.run(["--output", stamp.path, file], executable: Self.tool)
            #expect(r.status == 0)
            #expect(r.stdout.hasPrefix("\(file):6:18: warning: "))
            #expect(r.stderr == "courier-policy-lint: 1 file: 0 errors, 1 warning\n")
            let written = try String(contentsOf: stamp, encoding: .utf8)
            #expect(written == "// Courier's LintPoliciesOnBuild plugin linted this target's policy files: 1 file: 0 errors, 1 warning.\n")
        }
    }

    @Test func cleanPoliciesPrintNothing() async throws {
        try await Self.withStamp { stamp in
            let r = try await CourierProcess.run(["--output", stamp.path, "clean"], executable: Self.tool)
            #expect(r.status == 0)
            #expect(r.stdout == "")
            #expect(r.stderr == "")
            #expect(FileManager.default.fileExists(atPath: stamp.path))
        }
    }

    @Test func usageAndMissingFilesAreStatusTwo() async throws {
        let noOutput = try await CourierProcess.run(["clean"], executable: Self.tool)
        #expect(noOutput.status == 2)
        #expect(noOutput.stderr == "error: courier-policy-lint: --output STAMP is required\n")
        try await Self.withStamp { stamp in
            let missing = try await CourierProcess.run(["--output", stamp.path, "nope.yaml"], executable: Self.tool)
            #expect(missing.status == 2)
            #expect(missing.stdout == "")
            #expect(missing.stderr == "error: courier-policy-lint: no such file or directory: 'nope.yaml'\n")
            #expect(!FileManager.default.fileExists(atPath: stamp.path))
            let unknown = try await CourierProcess.run(["--strict", "--output", stamp.path, "clean"], executable: Self.tool)
            #expect(unknown.status == 2)
            #expect(unknown.stderr.hasPrefix("error: courier-policy-lint: unknown option '--strict'"))
        }
    }
}
