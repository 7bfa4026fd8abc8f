internal import ArgumentParser
internal import CourierLint
internal import Foundation

/// `courier`: lint and explain Courier policy files (and, in later releases, fetch through a policy).
///
/// Exit statuses follow the contract in docs/lint.md: 0 success, 1 the command ran and found a problem (lint
/// errors, or warnings under `--strict`), 2 a usage or I/O error. argument-parser's own code for usage errors
/// (64, `EX_USAGE`) is mapped to 2 in ``main()``.
@main
struct CourierCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "courier",
        abstract: "Lint, explain and document Courier policy files, fetch URLs with Courier's HTTP client, and demo the data loader.",
        discussion: """
            Exit status for lint, explain and schema: 0 success; 1 the policy has errors (or warnings with \
            --strict); 2 usage or I/O error. fetch uses curl's exit numbers (see 'courier help fetch'). demo: \
            0 every scenario behaved as expected, 1 one did not, 2 it could not run.
            """,
        version: "0.1.0",
        subcommands: [Lint.self, Explain.self, Schema.self, Fetch.self, Demo.self, Cache.self, Fleet.self]
    )

    /// The `User-Agent` of every request `courier` sends (unless `-H` gives one), with or without a policy.
    static let userAgent = "courier/\(configuration.version)"

    /// Parses the command line and runs the chosen command, exiting with the contract's status.
    static func main() async {
        let status = await run(arguments: Array(CommandLine.arguments.dropFirst()))
        Foundation.exit(status)
    }

    /// Runs `courier` with `arguments` and returns its exit status. Usage errors print the message and usage
    /// to standard error and return 2; `--help` and `--version` print to standard output and return 0.
    static func run(arguments: [String]) async -> Int32 {
        do {
            var command = try await asyncParseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            return LintExitStatus.success.rawValue
        } catch let exit as ExitCode {
            // A command chose its status (lint's 1, or a later command's own codes, e.g. fetch's curl-style ones).
            return exit.rawValue
        } catch let failure as CommandFailure {
            // A file or directory a command could not use: the reason, and no usage text (the command line was
            // fine). Left out after fetch's -s, as curl leaves it out.
            StandardError.error(failure.message)
            return failure.status
        } catch {
            switch exitCode(for: error) {
            case .success:
                // --help, --version
                print(fullMessage(for: error))
                return LintExitStatus.success.rawValue
            case .validationFailure:
                // Usage errors (argument-parser's EX_USAGE, 64): the message and the subcommand's usage.
                StandardError.write(fullMessage(for: error))
            default:
                // Any other error a command did not handle itself: its message alone.
                StandardError.write("courier: \(error)")
            }
            return LintExitStatus.usageOrIOError.rawValue
        }
    }
}
