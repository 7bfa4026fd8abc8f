import CourierCore
import CourierPolicy
import CourierTestSupport
import Testing

/// Hostile input: one clear error, quickly, never a crash or a hang.
@Suite struct HostileInputTests {
    /// Runs `body` and checks that it took well under a second of this thread's CPU time (wall time would count
    /// the other suites running beside it on a small machine).
    func fast<T>(_ body: () throws -> T, sourceLocation: Testing.SourceLocation = #_sourceLocation) rethrows -> T {
        let (result, elapsed) = try measuringThreadCPUTime(body)
        #expect(elapsed < .seconds(1), "took \(elapsed)", sourceLocation: sourceLocation)
        return result
    }

    @Test func billionLaughsStopsAtTheNodeLimit() throws {
        let result = fast { PolicyCompiler().compile(file: Fixtures.path("rules/too-many-nodes.yaml")) }
        #expect(result.summary == ["too-many-nodes@9"])
        #expect(result.graph == nil)
        let d = try #require(result.diagnostics.first)
        #expect(d.message.contains("2000000"))
    }

    @Test func aliasBombUsedAsAMappingKeyOrValueElsewhereAlsoStops() {
        // Quadratic blow-up through mappings rather than sequences.
        var yaml = "version: 1\nx0: &x0 {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8}\n"
        for i in 1...12 { yaml += "x\(i): &x\(i) {a: *x\(i - 1), b: *x\(i - 1), c: *x\(i - 1), d: *x\(i - 1)}\n" }
        let result = fast { compile(yaml) }
        #expect(result.diagnostics.map(\.rule) == ["too-many-nodes"])
    }

    @Test func deepNestingIsRefused() {
        for (open, close) in [("[", "]"), ("{a: ", "}")] {
            let depth = 100_000
            let yaml = "version: 1\nx: " + String(repeating: open, count: depth) + String(repeating: close, count: depth) + "\n"
            let result = fast { compile(yaml) }
            #expect(result.diagnostics.count == 1)
            #expect(result.diagnostics.first?.rule == "nesting-too-deep" || result.diagnostics.first?.rule == "yaml-syntax")
        }
        // Within libyaml's own limit, our limit answers first and names itself.
        let yaml = "version: 1\nx: " + String(repeating: "[", count: 200) + String(repeating: "]", count: 200) + "\n"
        let result = compile(yaml)
        #expect(result.summary == ["nesting-too-deep@2"])
        #expect(result.diagnostics.first?.message.contains("64") == true)
    }

    @Test func blockNestingIsRefusedToo() {
        var yaml = "version: 1\n"
        for level in 0..<100 { yaml += String(repeating: " ", count: level) + "k\(level):\n" }
        yaml += String(repeating: " ", count: 100) + "leaf: 1\n"
        let result = fast { compile(yaml) }
        #expect(result.diagnostics.map(\.rule) == ["nesting-too-deep"])
    }

    @Test func hugeFilesAreRefusedBeforeReading() throws {
        let dir = try makeTemporaryDirectory()
        let path = dir + "/huge.yaml"
        let line = Array("# padding padding padding padding padding padding padding padding padding padding\n".utf8)
        var bytes: [UInt8] = Array("version: 1\n".utf8)
        while bytes.count < (9 << 20) { bytes += line }
        try writeFile(path, bytes)
        let result = fast { PolicyCompiler().compile(file: path) }
        #expect(result.summary == ["file-too-large@1"])
        // The same through compile(source:), and with a smaller limit.
        let small = PolicyCompiler(limits: PolicyLimits(maxFileBytes: 100)).compile(source: String(repeating: "#\n", count: 100), path: dir + "/s.yaml")
        #expect(small.diagnostics.map(\.rule) == ["file-too-large"])
    }

    @Test func invalidUTF8IsReportedWhereItStarts() throws {
        let dir = try makeTemporaryDirectory()
        let path = dir + "/latin1.yaml"
        try writeFile(path, Array("version: 1\nservices:\n  caf".utf8) + [0xE9] + Array(": { hosts: [a.example.com] }\n".utf8))
        let result = fast { PolicyCompiler().compile(file: path) }
        #expect(result.summary == ["invalid-encoding@3"])
        #expect(result.diagnostics.first?.location.column == 6)
    }

    @Test func binaryGarbageGetsOneError() throws {
        let dir = try makeTemporaryDirectory()
        var generator = SplitMix64(seed: 7)
        for i in 0..<20 {
            let bytes = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let path = dir + "/garbage\(i).bin"
            try writeFile(path, bytes)
            let result = fast { PolicyCompiler().compile(file: path) }
            #expect(result.diagnostics.count == 1)
            #expect(result.graph == nil)
        }
        // An ELF header: NUL bytes are valid UTF-8 but not YAML.
        let elf: [UInt8] = [0x7F, 0x45, 0x4C, 0x46, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        try writeFile(dir + "/elf", elf)
        let result = PolicyCompiler().compile(file: dir + "/elf")
        #expect(result.diagnostics.map(\.rule) == ["yaml-syntax"])
    }

    @Test func unreadableFiles() throws {
        let dir = try makeTemporaryDirectory()
        let missing = PolicyCompiler().compile(file: dir + "/nope.yaml")
        #expect(missing.summary == ["file-unreadable@1"])
        #expect(missing.diagnostics.first?.message.contains("No such file") == true)
        #expect(missing.files == [dir + "/nope.yaml"])
        let directory = PolicyCompiler().compile(file: dir)
        #expect(directory.diagnostics.map(\.rule) == ["file-unreadable"])
    }

    @Test func recursiveAndUndefinedAliasesAreSyntaxErrors() {
        #expect(compile("version: 1\nx: &a [1, *a]\n").summary == ["yaml-syntax@2"])
        #expect(compile("version: 1\nx: &a {k: *a}\n").summary == ["yaml-syntax@2"])
        #expect(compile("version: 1\nx: *nowhere\n").summary == ["yaml-syntax@2"])
    }

    @Test func multipleDocumentsAreRefused() {
        let result = compile("version: 1\n---\nversion: 1\n")
        #expect(result.summary == ["yaml-syntax@2"])
    }

    @Test func emptyAndCommentOnlyFiles() {
        #expect(compile("").summary == ["missing-version@1"])
        #expect(compile("# nothing\n").summary == ["missing-version@1"])
        #expect(compile("[1, 2]\n").summary == ["wrong-type@1"])
        #expect(compile("just a string\n").summary == ["wrong-type@1"])
    }
}


/// Shapes that would be quadratic with a naive checker stay linear.
@Suite(.onThreadsOfTheirOwn) struct AdversarialShapeTests {
    /// Compiles without the per-file diagnostic cap (these tests count every diagnostic the checks find), and
    /// measures the compilation's CPU time on this thread: a quadratic check shows there, while wall time would
    /// count the other suites running beside it.
    func timed(_ yaml: String) -> (PolicyCompilation, Duration) {
        var result: PolicyCompilation?
        let elapsed = threadCPUTime { result = compile(yaml, limits: PolicyLimits(maxDiagnosticsPerFile: .max)) }
        return (result!, elapsed)
    }

    @Test func manyWildcardsInOneService() {
        var yaml = "version: 1\nservices:\n  wide:\n    hosts:\n"
        for i in 0..<20_000 { yaml += "      - \"*.h\(i).example.com\"\n" }
        yaml += "      - \"*.example.com\"\n"
        let (result, elapsed) = timed(yaml)
        #expect(result.rules("unreachable-rule").count == 20_000)
        #expect(elapsed < .seconds(5), "\(elapsed)")
    }

    @Test func longFallbackChainsWithManyBackEdges() {
        var yaml = "version: 1\nservices:\n  chain:\n    hosts: ["
        let n = 5_000
        yaml += (0..<n).map { "h\($0).example.com" }.joined(separator: ", ") + "]\n    fallbacks:\n"
        for i in 0..<n { yaml += "      h\(i).example.com: [h\((i + 1) % n).example.com, h0.example.com]\n" }
        let (result, elapsed) = timed(yaml)
        let cycles = result.rules("fallback-cycle")
        #expect((1...100).contains(cycles.count), "reports are capped")
        #expect(cycles.allSatisfy { $0.message.count < 2_000 })
        #expect(elapsed < .seconds(5), "\(elapsed)")
    }

    @Test func manyUnknownAuthoriserReferences() {
        var yaml = "version: 1\nauthorisers:\n"
        for i in 0..<2_000 { yaml += "  a\(i): { plugin: static-bearer, settings: { token: \"${env:T}\" } }\n" }
        yaml += "services:\n"
        for i in 0..<2_000 { yaml += "  s\(i): { hosts: [s\(i).example.com], authoriser: b\(i) }\n" }
        let (result, elapsed) = timed(yaml)
        #expect(result.rules("unknown-authoriser").count == 2_000)
        #expect(elapsed < .seconds(5), "\(elapsed)")
    }
}

@Suite struct EncodingTests {
    @Test func byteOrderMarkAndCRLFAreFine() throws {
        let dir = try makeTemporaryDirectory()
        let text = "version: 1\r\nservices:\r\n  web:\r\n    hosts: [api.example.com]\r\n    scheme: htp\r\n"
        try writeFile(dir + "/bom.yaml", [0xEF, 0xBB, 0xBF] + Array(text.utf8))
        let result = PolicyCompiler().compile(file: dir + "/bom.yaml")
        #expect(result.summary == ["invalid-value@5"])
        #expect(result.diagnostics.first?.location.column == 13)
    }

    @Test func nonASCIIColumnsCountCharacters() {
        let result = compile("version: 1\nservices:\n  café: { hosts: [x.example.com], schème: https }\n")
        #expect(result.summary == ["unknown-key@3"])
        #expect(result.diagnostics.first?.location.column == 35)
    }
}
