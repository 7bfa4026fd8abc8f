internal import ArgumentParser
internal import CourierCore
internal import CourierLint
internal import CourierPolicy
internal import Foundation

extension CourierCommand {
    /// `courier explain POLICY URL [-X METHOD] [--format text|json]`
    struct Explain: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the route a policy gives a URL: service, effective values and their origins, worst case.",
            discussion: """
                Secrets are never resolved: settings print as their ${env:...} / ${file:...} references. The proxy \
                line says which proxy the URL goes through and why: the policy's proxy:, else this shell's \
                https_proxy / http_proxy / all_proxy and no_proxy, as a load would read them.

                Exit status: 0 explained; 1 the policy has errors; 2 a usage error, a bad URL or an unreadable \
                policy file.
                """
        )

        @Argument(help: "The policy file to compile (its includes are followed).")
        var policy: String

        @Argument(help: "An absolute http(s) URL.")
        var url: String

        @Option(
            name: [.customShort("X"), .customLong("request")],
            help: ArgumentHelp("The request method, as with curl's -X; standard methods are upper-cased.", valueName: "method")
        )
        var method: String = "GET"

        @Option(help: "Output format: text or json.")
        var format: ExplainOutputFormat = .text

        func validate() throws {
            guard HTTPURL(url) != nil else {
                throw ValidationError("'\(url)' is not an absolute http or https URL")
            }
            guard HTTPMethod(commandLine: method).isValidToken else {
                throw ValidationError("'\(method)' is not a valid HTTP method")
            }
        }

        func run() async throws {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: policy, isDirectory: &isDirectory), !isDirectory.boolValue else {
                StandardError.write("courier explain: no such policy file: '\(policy)'")
                throw ExitCode(LintExitStatus.usageOrIOError.rawValue)
            }
            let compilation = PolicyCompiler().compile(file: policy)
            let problems = LintReport(files: compilation.files, diagnostics: compilation.diagnostics)
            guard let graph = compilation.graph, !compilation.hasErrors else {
                StandardError.write(TextFormatter().format(problems))
                StandardError.write("courier explain: '\(policy)' does not compile (\(problems.summary))")
                throw ExitCode(LintExitStatus.failure.rawValue)
            }
            let explanation = RouteExplanation(
                graph: graph, url: HTTPURL(url)!, method: HTTPMethod(commandLine: method), environment: ProcessInfo.processInfo.environment
            )
            switch format {
            case .json: print(JSONOutput.encode(explanation), terminator: "")
            case .text: print(ExplanationPrinter.text(explanation), terminator: "")
            }
            if problems.warningCount > 0 {
                StandardError.write("courier explain: the policy has \(problems.warningCount) warning(s); run courier lint \(policy)")
            }
        }
    }
}
