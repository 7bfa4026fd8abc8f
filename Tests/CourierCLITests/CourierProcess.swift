import CourierTestSupport
import Foundation
import Testing

/// Runs the built `courier` executable the way a user does and captures what it prints.
///
/// The binary is found in the build products directory, which is the directory holding the test bundle
/// (`.build/debug/CourierPackageTests.xctest`): SwiftPM builds `courier` there because this test target
/// depends on it. `COURIER_BINARY` overrides the path.
struct CourierProcess {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static let productsDirectory: URL = {
        #if os(macOS)
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            return bundle.bundleURL.deletingLastPathComponent()
        }
        #endif
        // On Linux the .xctest bundle is the test executable itself.
        var url = Bundle.main.executableURL ?? URL(filePath: CommandLine.arguments[0])
        while url.path != "/" && !url.lastPathComponent.hasSuffix(".xctest") {
            url = url.deletingLastPathComponent()
        }
        if url.path == "/" { url = Bundle.main.executableURL ?? URL(filePath: CommandLine.arguments[0]) }
        return url.deletingLastPathComponent()
    }()

    static var binary: URL {
        if let override = ProcessInfo.processInfo.environment["COURIER_BINARY"] { return URL(filePath: override) }
        return productsDirectory.appending(path: "courier")
    }

    /// The test target's `Fixtures/` directory.
    static let fixtures = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "Fixtures")

    /// The repository root (for `policies/`).
    static let repositoryRoot = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Runs `courier arguments...` (or another of the package's executables) in `directory` (default: `Fixtures/`) and
    /// waits at most `timeout` seconds.
    /// `environment` adds to (or replaces in) this process's environment for the child; `input`, when given, is
    /// the child's standard input (else `/dev/null`).
    ///
    /// The wait is asynchronous; the calls that block (creating and removing the scratch folder, and `posix_spawn`,
    /// which waits until the child has executed the binary) run where the suite does: every suite here runs on
    /// ``ThreadExecutor/blocking`` (`.onBlockingThreads`), never on Swift concurrency's few cooperative threads, on
    /// which other suites' timers depend (a snapshot of a stalled run found both of them in such calls).
    static func run(
        _ arguments: [String], in directory: URL = fixtures, timeout: Double = 30, environment extra: [String: String] = [:],
        standardInput input: [UInt8]? = nil, executable: URL = binary
    ) async throws -> Result {
        let scratch = FileManager.default.temporaryDirectory.appending(path: "courier-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outURL = scratch.appending(path: "stdout")
        let errURL = scratch.appending(path: "stderr")
        // A fixed width, so argument-parser's usage text wraps the same way everywhere.
        var environment = ProcessInfo.processInfo.environment
        environment["COLUMNS"] = "100"
        // The tests' peers are on 127.0.0.1: a proxy set in the shell that runs the tests must not carry them.
        for name in ["https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"] {
            environment[name] = nil
        }
        environment.merge(extra) { $1 }
        let process = try ChildProcess(
            executable.path, arguments, environment: environment, directory: directory.path,
            stdin: input == nil ? .null : .pipe, stdout: .file(outURL.path), stderr: .file(errURL.path)
        )
        if let input {
            // On a thread of its own: a pipe holds 64 KiB, and the child drains it only as it reads.
            Thread {
                var offset = 0
                while offset < input.count {
                    let n = input[offset...].withUnsafeBytes { write(process.standardInput!, $0.baseAddress, $0.count) }
                    if n < 0 && errno == EINTR { continue }
                    if n <= 0 { break }
                    offset += n
                }
                process.closeStandardInput()
            }.start()
        }
        let watchdog = Task {
            try await Task.sleep(for: .seconds(timeout))
            if process.isRunning {
                process.send(SIGTERM)
                Issue.record("\(executable.lastPathComponent) \(arguments.joined(separator: " ")) did not finish within \(timeout)s")
            }
        }
        // The wait is asynchronous (a thread of the child's own waits for it).
        let termination = await process.termination()
        watchdog.cancel()
        return Result(
            status: termination.status,
            stdout: try String(contentsOf: outURL, encoding: .utf8),
            stderr: try String(contentsOf: errURL, encoding: .utf8)
        )
    }
}

/// Byte-for-byte comparison with files in `Golden/`; `COURIER_UPDATE_GOLDEN=1` rewrites them.
enum GoldenFile {
    static let directory = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "Golden")

    static func check(_ actual: String, named name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let url = directory.appending(path: name)
        if ProcessInfo.processInfo.environment["COURIER_UPDATE_GOLDEN"] == "1" {
            try Data(actual.utf8).write(to: url)
            return
        }
        let expected = try String(contentsOf: url, encoding: .utf8)
        #expect(
            actual == expected,
            "output differs from Golden/\(name); if the change is intended, rerun with COURIER_UPDATE_GOLDEN=1",
            sourceLocation: sourceLocation
        )
    }
}

@Suite(.onBlockingThreads) struct BinaryLocationTests {
    @Test func builtBinaryIsNextToTheTestBundle() {
        #expect(
            FileManager.default.isExecutableFile(atPath: CourierProcess.binary.path),
            "no courier executable at \(CourierProcess.binary.path)"
        )
    }
}
