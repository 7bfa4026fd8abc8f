internal import ArgumentParser
internal import CourierLint
internal import Foundation

extension CourierCommand {
    /// `courier lint [--format text|json|sarif] [--strict] PATH...`
    struct Lint: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check policy files and report every problem.",
            discussion: """
                A directory stands for every *.yaml and *.yml file below it. Each file is compiled on its own, \
                includes followed; a problem reported through two files is printed once.

                Exit status: 0 no errors (warnings allowed unless --strict); 1 errors, or warnings with \
                --strict; 2 a usage error or a path that does not exist.
                """
        )

        @Option(help: "Output format: text, json or sarif (SARIF 2.1.0, for GitHub code scanning).")
        var format: LintOutputFormat = .text

        @Flag(help: "Treat warnings as errors for the exit status.")
        var strict = false

        @Argument(help: "Policy files, or directories to search for *.yaml / *.yml files.")
        var paths: [String] = []

        func validate() throws {
            if paths.isEmpty { throw ValidationError("give at least one policy file or directory") }
        }

        func run() async throws {
            let report: LintReport
            do {
                report = try LintRunner().run(paths: paths)
            } catch {
                StandardError.write("courier lint: \(error)")
                throw ExitCode(LintExitStatus.usageOrIOError.rawValue)
            }
            let output = format.formatter(workingDirectory: FileManager.default.currentDirectoryPath).format(report)
            print(output, terminator: "")
            // Standard output is buffered and standard error is not: flushed first, the diagnostics come before the
            // summary when both streams go to one pipe (a CI log).
            fflush(nil)
            if format == .text { StandardError.write(report.summary) }
            let status = report.exitStatus(strict: strict)
            if status != .success { throw ExitCode(status.rawValue) }
        }
    }
}
