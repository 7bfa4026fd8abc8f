import CourierCore
import CourierLint
import CourierPolicy
import Testing

@Suite struct LintRunnerTests {
    @Test func anIncludedFileLintedTwiceReportsItsProblemOnce() throws {
        let dir = Fixtures.path("includes")
        // Compiled separately, common.yaml's unknown key shows up in both compilations.
        let viaApp = PolicyCompiler().compile(file: dir + "/app.yaml").diagnostics
        let alone = PolicyCompiler().compile(file: dir + "/common.yaml").diagnostics
        let inBoth = Set(viaApp).intersection(alone)
        #expect(inBoth.map(\.rule) == ["unknown-key"])

        let report = try LintRunner().run(paths: [dir])
        #expect(report.files == [dir + "/app.yaml", dir + "/common.yaml"])
        #expect(report.diagnostics.count == Set(viaApp + alone).count)
        #expect(report.diagnostics.filter { $0.rule == "unknown-key" }.count == 1)
        let unknown = try #require(report.diagnostics.first { $0.rule == "unknown-key" })
        #expect(unknown.location == CourierCore.SourceLocation(file: dir + "/common.yaml", line: 4, column: 3))
        let attempts = try #require(report.diagnostics.first { $0.rule == "invalid-max-attempts" })
        #expect(attempts.location.file == dir + "/app.yaml" && attempts.location.line == 7)
        #expect(report.exitStatus(strict: false) == .failure)
    }

    @Test func theSameFileSpelledTwoWaysIsOneFile() throws {
        let dir = Fixtures.path("includes")
        let report = try LintRunner().run(paths: [dir + "/./app.yaml", dir + "//app.yaml", dir + "/common.yaml"])
        #expect(report.files == [dir + "/app.yaml", dir + "/common.yaml"])
        #expect(report.diagnostics.filter { $0.rule == "unknown-key" }.count == 1)
    }

    @Test func includedFilesCountTowardsTheFileCount() throws {
        let report = try LintRunner().run(paths: [Fixtures.path("explain/explain.yaml")])
        #expect(report.files == [Fixtures.path("explain/explain.yaml"), Fixtures.path("explain/common.yaml")])
        #expect(report.diagnostics.isEmpty)
        #expect(report.exitStatus(strict: true) == .success)
    }

    @Test func warningsFailOnlyUnderStrict() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        try dir.write(
            "pinned.yaml",
            """
            version: 1
            services:
              cdn:
                hosts: [cdn.example.com]
                tls: { pins: ["sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="] }

            """
        )
        let report = try LintRunner().run(paths: [dir.path])
        #expect(report.errorCount == 0)
        #expect(report.diagnostics.map(\.rule) == ["single-pin"])
        #expect(report.exitStatus(strict: false) == .success)
        #expect(report.exitStatus(strict: true) == .failure)
    }

    @Test func hostileFilesGetDiagnosticsNotCrashes() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        try dir.write("garbage.yaml", String(decoding: (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7919) }, as: UTF8.self))
        try dir.write("deep.yaml", String(repeating: "[", count: 10_000))
        try dir.write("empty.yml", "")
        try dir.write(
            "bomb.yaml",
            """
            version: 1
            a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x"]
            b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
            c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
            d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
            e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
            f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
            g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]

            """
        )
        let report = try LintRunner().run(paths: [dir.path])
        #expect(report.files.count == 4)
        for name in ["garbage.yaml", "deep.yaml", "empty.yml", "bomb.yaml"] {
            #expect(
                report.diagnostics.contains { $0.location.file == dir.path + "/" + name && $0.severity == .error },
                "no error for \(name)"
            )
        }
    }

    @Test func missingPathStopsBeforeLinting() {
        #expect(throws: LintInputError(.missingPath, path: Fixtures.path("nope"))) {
            try LintRunner().run(paths: [Fixtures.path("includes"), Fixtures.path("nope")])
        }
    }
}
