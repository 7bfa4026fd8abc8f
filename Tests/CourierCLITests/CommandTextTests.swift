import CourierTestSupport
import Foundation
import Testing

/// How `courier`'s words come out (issue 25): help text wrapped only where the width demands, `explain` citing
/// each value's own line, a tab in indentation named as such, `lint`'s order on one pipe, and `fetch --policy`
/// printing a broken policy's diagnostics as `lint` does.
@Suite(.timeLimit(.minutes(1)), .onBlockingThreads) struct CommandTextTests {
    /// Every command's overview and discussion (the text before `USAGE:`), wrapped at 100 columns (argument-parser
    /// fills a line to 99 at most): a line breaks only where the next word would not fit on it, never in
    /// mid-sentence because the source broke the line.
    @Test(arguments: [
        [], ["lint"], ["explain"], ["schema"], ["fetch"], ["demo"], ["cache"], ["cache", "ls"], ["cache", "verify"],
        ["fleet", "status"],
    ])
    func helpIsWrappedOnlyAtTheWidth(_ command: [String]) async throws {
        let result = try await CourierProcess.run(command + ["--help"])
        #expect(result.status == 0, "\(result.stderr)")
        let text = try #require(result.stdout.components(separatedBy: "USAGE:").first)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for (line, next) in zip(lines, lines.dropFirst()) where !line.isEmpty && !next.isEmpty {
            let nextWord = next.split(separator: " ").first ?? ""
            #expect(
                line.count + 1 + nextWord.count >= 100,
                "courier \(command.joined(separator: " ")) --help breaks early: '\(line)' / '\(next)'"
            )
        }
    }

    @Test func explainCitesEachAuthoriserValuesOwnLine() async throws {
        let files = try FetchTestFiles()
        defer { files.remove() }
        let policy = try files.write("policy.yaml", """
            version: 1
            authorisers:
              partner:
                plugin: oauth2-client-credentials
                timeout: 3s
                settings:
                  token-url: https://auth.example.com/token
                  client-id: app
                  client-secret: "${env:SECRET}"
            services:
              api:
                hosts: [api.example.com]
                authoriser: partner
            """)
        let result = try await CourierProcess.run(["explain", policy, "https://api.example.com/x"])
        #expect(result.status == 0, "\(result.stderr)")
        func origin(_ key: String) -> String? {
            result.stdout.split(separator: "\n").first { $0.hasPrefix("  \(key) ") }.map { String($0.split(separator: " ").last ?? "") }
        }
        #expect(origin("authorisers.partner.timeout") == "\(policy):5", "\(result.stdout)")
        #expect(origin("authorisers.partner.settings.token-url") == "\(policy):7")
        #expect(origin("authorisers.partner.settings.client-id") == "\(policy):8")
        #expect(origin("authorisers.partner.settings.client-secret") == "\(policy):9")
        // Not written: the built-in default, not the authoriser's first line.
        #expect(result.stdout.split(separator: "\n").first { $0.contains("allow-plain-http") }?.hasSuffix("built-in default") == true)
    }

    @Test func aTabInIndentationIsNamedAndPointedAt() async throws {
        let files = try FetchTestFiles()
        defer { files.remove() }
        let cases = [
            ("version: 1\nservices:\n\tapi: {}\n", "3:1"),
            ("version: 1\nservices:\n  api:\n  \thosts: [a]\n", "4:3"),
            ("version: 1\ndefaults:\n  timeouts:\n    connect: 1s\n\ttotal: 2s\n", "5:1"),
        ]
        for (index, (text, position)) in cases.enumerated() {
            let path = try files.write("tab\(index).yaml", text)
            let result = try await CourierProcess.run(["lint", path])
            #expect(result.status == 1)
            #expect(result.stdout.hasPrefix("\(path):\(position): error: YAML forbids tabs for indentation"), "\(result.stdout)")
            #expect(result.stdout.contains("    suggestion: indent with spaces"))
        }
        // A tab between a key and its value is not indentation.
        let fine = try await CourierProcess.run(["lint", try files.write("fine.yaml", "version: 1\nservices:\n  api:\n    hosts:\t[a.example.com]\n")])
        #expect(fine.status == 0, "\(fine.stdout)")
    }

    /// Both streams on one file, as a CI log has them: the diagnostics, then the summary.
    @Test func lintKeepsItsOrderOnOnePipe() async throws {
        let files = try FetchTestFiles()
        defer { files.remove() }
        let log = files.path("log")
        let process = try ChildProcess(
            "/bin/sh", ["-c", "\"$0\" lint broken warn 2>&1", CourierProcess.binary.path], directory: CourierProcess.fixtures.path,
            stdout: .file(log)
        )
        #expect(await process.termination().status == 1)
        let lines = try files.read("log").split(separator: "\n")
        #expect(lines.last == "2 files: 3 errors, 1 warning", "\(lines)")
        #expect(lines.count > 1)
        #expect(lines.dropLast().allSatisfy { $0.contains(": error: ") || $0.contains(": warning: ") || $0.hasPrefix("    suggestion: ") }, "\(lines)")
    }

    @Test func fetchPrintsABrokenPolicyAsLintDoes() async throws {
        let files = try FetchTestFiles()
        defer { files.remove() }
        let policy = try files.write("policy.yaml", "version: 1\nservices:\n  api:\n    hostz: [api.example.com]\n")
        let lint = try await CourierProcess.run(["lint", policy])
        let fetch = try await CourierProcess.run(["fetch", "--policy", policy, "http://api.example.com/"])
        #expect(fetch.status == 2)
        #expect(lint.stdout.contains("    suggestion: did you mean 'hosts'?"), "\(lint.stdout)")
        #expect(fetch.stderr.hasPrefix(lint.stdout), "\(fetch.stderr)")
        #expect(fetch.stderr.contains("no request was sent"))
    }
}
