// libFuzzer target for CourierPolicy's compiler. Built and run by Fuzz/run.sh (docs/fuzzing.md).
//
// The input is a policy file (bytes decoded as UTF-8, invalid sequences replaced), compiled as a file in a
// folder that does not exist, so includes find nothing. Properties: a graph exists exactly when no diagnostic
// is an error; compiling again gives the same diagnostics; at most maxDiagnosticsPerFile diagnostics (plus the
// count) per file; and the text of the diagnostics stays within a bound of the input's size: an alias
// repeating a long scalar must not multiply what is printed. Hangs (-timeout) and memory (-rss_limit_mb) are
// findings too: the linear-time bounds of issue 12 show up as timeouts when broken.
internal import CourierCore
internal import CourierPolicy

private let compiler = PolicyCompiler()
private let path = "/nonexistent-courier-fuzz/policy.yaml"

/// One input through the harness: libFuzzer's `LLVMFuzzerTestOneInput`, reached through `FuzzTarget`.
func fuzzPolicy(_ data: UnsafeBufferPointer<UInt8>) {
    let text = String(decoding: data, as: UTF8.self)
    let result = compiler.compile(source: text, path: path)
    precondition((result.graph != nil) == !result.hasErrors, "a graph exists exactly when there are no errors")
    let perFile = Dictionary(grouping: result.diagnostics, by: \.location.file)
    for (file, diagnostics) in perFile {
        precondition(diagnostics.count <= compiler.limits.maxDiagnosticsPerFile + 1, "\(diagnostics.count) diagnostics for \(file)")
    }
    // Messages quote user text cut to 60 characters; the longest fixed text (a plugin's list of settings) is a
    // few hundred bytes.
    let printed = result.diagnostics.reduce(0) { $0 + $1.message.utf8.count + ($1.suggestion?.utf8.count ?? 0) }
    precondition(printed <= 2_048 * result.diagnostics.count, "a diagnostic of over 2 KB")
    precondition(printed <= 65_536 + 64 * data.count, "\(printed) bytes of diagnostics for \(data.count) bytes of input")
    let again = compiler.compile(source: text, path: path)
    precondition(again.diagnostics == result.diagnostics, "a second compilation reports differently")
    precondition(again.graph?.services.map(\.name) == result.graph?.services.map(\.name), "a second compilation builds another graph")
}
