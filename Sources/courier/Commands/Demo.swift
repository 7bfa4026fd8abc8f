internal import ArgumentParser
internal import Foundation

extension CourierCommand {
    /// `courier demo`: a live tour of the data loader against a small upstream started in the same process.
    struct Demo: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run requests through the demo policy against a local upstream and trace the loader's decisions.",
            discussion: """
                Starts a small HTTP server on 127.0.0.1 (a port the kernel picks) that throttles (429 with \
                Retry-After), fails (503), wants an OAuth 2 token (401, then a refresh), and plays a backup for \
                [::1], where nothing listens. Then it runs five scenarios through the policy and prints, live, \
                what the loader decided and why. It checks its own outcomes.

                The demo policy is built into the binary (policies/demo.yaml is its readable copy), so the demo \
                runs from any directory; --policy FILE runs the same scenarios through another policy.

                Exit status: 0 every scenario behaved as expected; 1 one did not (the failed checks are listed); \
                2 the demo could not run (policy missing or unfit, no port).
                """
        )

        @Option(help: "The policy file the requests go through (default: the built-in copy of policies/demo.yaml).")
        var policy: String?

        @Flag(
            name: .customLong("no-color"),
            help: "No ANSI colours (also the case when standard output is not a terminal or NO_COLOR is set)."
        )
        var noColor = false

        func run() async throws {
            if let policy, !FileManager.default.fileExists(atPath: policy) {
                StandardError.write("courier demo: cannot find \(policy)")
                throw ExitCode(2)
            }
            let color = !noColor && isatty(1) == 1 && ProcessInfo.processInfo.environment["NO_COLOR", default: ""].isEmpty
            let runner = DemoRunner(policyPath: policy, color: color)
            let checks: DemoChecks
            do {
                checks = try await runner.run()
            } catch {
                StandardError.write("courier demo: \(error)")
                throw ExitCode(2)
            }
            if !checks.passed { throw ExitCode(1) }
        }
    }
}
