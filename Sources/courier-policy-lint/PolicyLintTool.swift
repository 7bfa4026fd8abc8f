internal import CourierLint
internal import FoundationEssentials

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#endif

/// `courier-policy-lint --output STAMP [--] FILE...`: what the `LintPoliciesOnBuild` build-tool plugin runs on every
/// build of a target that keeps policy files.
///
/// It lints the files as `courier lint --format text` does and prints the same `FILE:LINE:COLUMN: error|warning:
/// MESSAGE [rule]` lines, which SwiftPM shows as the build's diagnostics (the plugin passes absolute paths, so
/// they point at the files). With no error it writes `STAMP`, the command's declared output (a Swift file holding
/// one comment, compiled into the target, so that the build cannot skip the command); with errors it removes
/// `STAMP` and exits 1, which fails the build. A usage or I/O error exits 2.
///
/// A tool of its own, not `courier lint`: it links the policy compiler and the linter only (no transport, TLS, cache,
/// swift-argument-parser), so a package that uses the plugin builds a fraction of Courier (docs/lint.md).
@main
struct PolicyLintTool {
    static func main() {
        var arguments = CommandLine.arguments.dropFirst()
        var output: String?
        var files: [String] = []
        while let argument = arguments.popFirst() {
            if argument == "--" {
                files += arguments
                break
            }
            if argument == "--output" {
                guard let value = arguments.popFirst() else { fail("--output needs a path") }
                output = value
            } else if argument.hasPrefix("-") {
                fail("unknown option '\(argument)'; usage: courier-policy-lint --output STAMP [--] FILE...")
            } else {
                files.append(argument)
            }
        }
        guard let output else { fail("--output STAMP is required") }

        let report: LintReport
        do {
            report = try LintRunner().run(paths: files)
        } catch {
            fail(error.description)
        }
        print(TextFormatter().format(report), terminator: "")
        // The diagnostics before the summary when both streams reach one log.
        fflush(nil)
        if !report.diagnostics.isEmpty { writeStandardError("courier-policy-lint: \(report.summary)") }

        let status = report.exitStatus(strict: false)
        guard status == .success else {
            try? FileManager.default.removeItem(atPath: output)
            exit(status.rawValue)
        }
        let stamp = "// Courier's LintPoliciesOnBuild plugin linted this target's policy files: \(report.summary).\n"
        do {
            try Data(stamp.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
        } catch {
            fail("cannot write '\(output)': \(error)")
        }
    }

    /// Prints a usage or I/O error in the compiler's shape and exits with 2.
    private static func fail(_ message: String) -> Never {
        writeStandardError("error: courier-policy-lint: \(message)")
        exit(LintExitStatus.usageOrIOError.rawValue)
    }

    private static func writeStandardError(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        bytes.withUnsafeBytes { _ = write(2, $0.baseAddress, $0.count) }
    }
}
