import CourierFuzz
import Foundation
import Testing

/// The fuzz targets' seed corpora, replayed through their harnesses in the ordinary build: every seed Fuzz/run.sh
/// starts libFuzzer from keeps every property, and a harness that no longer compiles or holds is caught by
/// `swift test`, not first by the fuzzing job. A broken property is a precondition, as libFuzzer needs, so it stops
/// the test process with its message.
@Suite struct SeedCorpusTests {
    static let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// Each target's seeds, relative to the repository's root: the directories Fuzz/run.sh passes to libFuzzer.
    static let seeds: [FuzzTarget: [String]] = [
        .response: ["Fuzz/corpus/response"],
        .decoder: ["Fuzz/corpus/decoder"],
        .policy: ["policies", "Tests/CourierPolicyTests/Fixtures", "Tests/CourierLintTests/Fixtures"],
        .url: ["Fuzz/corpus/url"],
        .record: ["Fuzz/corpus/record"],
        .cacheHeaders: ["Fuzz/corpus/cache-headers"],
        .resp: ["Fuzz/corpus/resp"],
        .request: ["Fuzz/corpus/request"],
    ]

    @Test(arguments: FuzzTarget.allCases)
    func seedsKeepEveryProperty(target: FuzzTarget) throws {
        let directories = try #require(Self.seeds[target]).map { Self.root + "/" + $0 }
        let files = try FuzzTarget.inputFiles(directories)
        #expect(files.count >= 5, "\(target.rawValue) has \(files.count) seeds")
        #expect(try target.replay(files) == files.count)
    }

    /// A corpus directory added under Fuzz/corpus/ is replayed here too.
    @Test func everyCorpusDirectoryHasItsTarget() throws {
        let corpus = Self.root + "/Fuzz/corpus"
        let directories = try FileManager.default.contentsOfDirectory(atPath: corpus).filter {
            (try? FileManager.default.contentsOfDirectory(atPath: corpus + "/" + $0)) != nil
        }
        let replayed = Set(Self.seeds.values.joined())
        for directory in directories.sorted() {
            #expect(replayed.contains("Fuzz/corpus/" + directory), "Fuzz/corpus/\(directory) is no target's seed")
        }
        #expect(!directories.isEmpty)
    }

    /// The replay reads what libFuzzer reads: files as named, directories recursively, and a missing path is an
    /// error rather than nothing replayed.
    @Test func inputFilesFollowLibFuzzer() throws {
        let files = try FuzzTarget.inputFiles([Self.root + "/Tests/CourierLintTests/Fixtures", Self.root + "/policies/demo.yaml"])
        #expect(files.contains { $0.hasPrefix(Self.root + "/Tests/CourierLintTests/Fixtures/includes/") })
        #expect(files.last == Self.root + "/policies/demo.yaml")
        #expect(throws: MissingInput.self) { try FuzzTarget.inputFiles([Self.root + "/Fuzz/corpus/no-such-directory"]) }
    }
}
