import CourierCore
import CourierLint
import Foundation
import Testing

@Suite struct PolicyFileFinderTests {
    @Test func directoryMeansEveryYAMLFileBelowItSorted() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        try dir.write("b.yaml", "version: 1\n")
        try dir.write("a.yml", "version: 1\n")
        try dir.write("nested/deeper/c.YAML", "version: 1\n")
        try dir.write("notes.txt", "not a policy\n")
        try dir.write("README.md", "# no\n")
        try dir.write("nested/yaml", "no extension\n")
        try dir.write("folder.yaml/inner.yaml", "version: 1\n")  // a directory named like a policy file
        let files = try PolicyFileFinder().files(for: [dir.path])
        #expect(files == ["a.yml", "b.yaml", "folder.yaml/inner.yaml", "nested/deeper/c.YAML"].map { dir.path + "/" + $0 })
    }

    @Test func fileMeansItselfWhateverItsExtension() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let file = try dir.write("policy.conf", "version: 1\n")
        #expect(try PolicyFileFinder().files(for: [file]) == [file])
    }

    @Test func trailingSlashIsNotDoubled() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        try dir.write("a.yaml", "version: 1\n")
        #expect(try PolicyFileFinder().files(for: [dir.path + "/"]) == [dir.path + "/a.yaml"])
    }

    @Test func aFileReachedTwiceIsListedOnce() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let a = try dir.write("a.yaml", "version: 1\n")
        try dir.write("b.yaml", "version: 1\n")
        let files = try PolicyFileFinder().files(for: [a, dir.path, dir.path + "/./a.yaml"])
        #expect(files == [a, dir.path + "/b.yaml"])
    }

    @Test func missingPathIsAnInputError() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let missing = dir.path + "/nope.yaml"
        #expect(throws: LintInputError(.missingPath, path: missing)) {
            try PolicyFileFinder().files(for: [dir.path, missing])
        }
        #expect(throws: LintInputError(.missingPath, path: "")) { try PolicyFileFinder().files(for: [""]) }
        #expect(throws: LintInputError(.noPaths, path: "")) { try PolicyFileFinder().files(for: []) }
        #expect(LintInputError(.missingPath, path: "x.yaml").description == "no such file or directory: 'x.yaml'")
    }

    @Test func pathsWithoutAnyPolicyFileAreAnInputError() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        try dir.write("notes.txt", "no policy here\n")
        #expect(throws: LintInputError(.noPolicyFiles, path: dir.path)) { try PolicyFileFinder().files(for: [dir.path]) }
        // One empty directory beside a policy file is fine.
        let policy = try dir.write("sub/a.yaml", "version: 1\n")
        try FileManager.default.createDirectory(atPath: dir.path + "/empty", withIntermediateDirectories: true)
        #expect(try PolicyFileFinder().files(for: [dir.path + "/empty", policy]) == [policy])
    }
}

@Suite struct PolicyFileFinderLinkTests {
    @Test func linkCyclesEndAndDanglingLinksAreReported() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        try dir.write("sub/a.yaml", "version: 1\n")
        try FileManager.default.createSymbolicLink(atPath: dir.path + "/sub/up", withDestinationPath: "..")
        try FileManager.default.createSymbolicLink(atPath: dir.path + "/gone.yaml", withDestinationPath: "/nonexistent/x.yaml")
        let started = ContinuousClock.now
        let files = try PolicyFileFinder().files(for: [dir.path])
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(files == [dir.path + "/gone.yaml", dir.path + "/sub/a.yaml"])
        let report = LintRunner().lint(files: files)
        #expect(report.diagnostics.contains { $0.location.file == dir.path + "/gone.yaml" && $0.severity == .error })
    }
}
