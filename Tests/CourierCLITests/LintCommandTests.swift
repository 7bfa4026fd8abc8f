import CourierTestSupport
import Foundation
import Testing

/// `courier lint` as a user runs it: the built binary, run in Tests/CourierCLITests/Fixtures, with stdout
/// compared byte for byte to Golden/ and the exit status checked against the contract.
@Suite(.onBlockingThreads) struct LintCommandTests {
    @Test func textOutputAndStatusForErrors() async throws {
        let r = try await CourierProcess.run(["lint", "broken", "warn"])
        #expect(r.status == 1)
        try GoldenFile.check(r.stdout, named: "lint-broken.text")
        #expect(r.stderr == "2 files: 3 errors, 1 warning\n")
    }

    @Test func jsonOutput() async throws {
        let r = try await CourierProcess.run(["lint", "--format", "json", "broken", "warn"])
        #expect(r.status == 1)
        try GoldenFile.check(r.stdout, named: "lint-broken.json")
        #expect(r.stderr == "")
    }

    @Test func sarifOutput() async throws {
        let r = try await CourierProcess.run(["lint", "--format", "sarif", "broken", "warn"])
        #expect(r.status == 1)
        try GoldenFile.check(r.stdout, named: "lint-broken.sarif")
        let log = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(log["version"] as? String == "2.1.0")
    }

    @Test func sarifPathsAreRelativeToTheWorkingDirectoryEvenWhenGivenAbsolute() async throws {
        let absolute = CourierProcess.fixtures.appending(path: "warn").path
        let r = try await CourierProcess.run(["lint", "--format", "sarif", absolute])
        #expect(r.status == 0)
        #expect(r.stdout.contains("\"uri\" : \"warn/pinned.yaml\""))
        #expect(!r.stdout.contains(CourierProcess.fixtures.path))
    }

    @Test func warningsPassUnlessStrict() async throws {
        let relaxed = try await CourierProcess.run(["lint", "warn"])
        #expect(relaxed.status == 0)
        #expect(relaxed.stdout.hasPrefix("warn/pinned.yaml:6:18: warning: "))
        let strict = try await CourierProcess.run(["lint", "--strict", "warn"])
        #expect(strict.status == 1)
        #expect(strict.stdout == relaxed.stdout)
    }

    @Test func cleanPolicyPrintsNothingAndExitsZero() async throws {
        let r = try await CourierProcess.run(["lint", "--strict", "clean"])
        #expect(r.status == 0)
        #expect(r.stdout == "")
        #expect(r.stderr == "2 files: 0 errors, 0 warnings\n")
    }

    @Test func missingPathIsStatusTwo() async throws {
        let r = try await CourierProcess.run(["lint", "clean", "nope.yaml"])
        #expect(r.status == 2)
        #expect(r.stdout == "")
        #expect(r.stderr == "courier lint: no such file or directory: 'nope.yaml'\n")
    }

    @Test func directoryWithoutPoliciesIsStatusTwo() async throws {
        let dir = FileManager.default.temporaryDirectory.appending(path: "courier-cli-empty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try await CourierProcess.run(["lint", "."], in: dir)
        #expect(r.status == 2)
        #expect(r.stderr == "courier lint: no *.yaml or *.yml file in '.'\n")
    }

    @Test(arguments: [
        (["lint"], "give at least one policy file or directory"),
        (["lint", "--bogus", "clean"], "Unknown option '--bogus'"),
        (["lint", "--format", "xml", "clean"], "The value 'xml' is invalid for '--format <format>'"),
        (["frobnicate"], "Unexpected argument 'frobnicate'"),
    ])
    func usageErrorsAreStatusTwo(arguments: [String], message: String) async throws {
        let r = try await CourierProcess.run(arguments)
        #expect(r.status == 2, "argument-parser's 64 must be mapped to 2")
        #expect(r.stdout == "")
        #expect(r.stderr.contains(message), "stderr: \(r.stderr)")
        #expect(r.stderr.contains("Usage: courier"))
    }

    @Test func helpAndVersionExitZero() async throws {
        let help = try await CourierProcess.run(["lint", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("USAGE: courier lint [--format <format>] [--strict] [<paths> ...]"))
        let root = try await CourierProcess.run(["--help"])
        #expect(root.status == 0)
        for command in ["lint", "explain", "schema"] { #expect(root.stdout.contains("  \(command)")) }
        let version = try await CourierProcess.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout == "0.1.0\n")
    }

    @Test func binaryGarbageIsAnErrorNotACrash() async throws {
        let dir = FileManager.default.temporaryDirectory.appending(path: "courier-cli-garbage-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var bytes = [UInt8](repeating: 0, count: 65_536)
        for i in bytes.indices { bytes[i] = UInt8(truncatingIfNeeded: i &* 2_654_435_761 >> 7) }
        try Data(bytes).write(to: dir.appending(path: "garbage.yaml"))
        let r = try await CourierProcess.run(["lint", "garbage.yaml"], in: dir, timeout: 20)
        #expect(r.status == 1)
        #expect(r.stdout.hasPrefix("garbage.yaml:"))
        #expect(r.stdout.contains(": error: "))
    }

    @Test func repositoryPoliciesAreStrictlyClean() async throws {
        let r = try await CourierProcess.run(["lint", "--strict", "policies/"], in: CourierProcess.repositoryRoot)
        #expect(r.status == 0, "\(r.stdout)")
        #expect(r.stdout == "")
    }
}
