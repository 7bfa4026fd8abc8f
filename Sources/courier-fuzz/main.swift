// courier-fuzz: Courier's libFuzzer targets in one executable (docs/fuzzing.md).
//
//   courier-fuzz <target> [inputs and corpus directories] [libFuzzer flags]
//       target   FuzzResponse, FuzzDecoder, FuzzPolicy, FuzzURL, FuzzRecord, FuzzCacheHeaders or FuzzRESP
//
// Two builds, one main:
// - An ordinary build (`swift build`, no sanitizer) replays: every file named, and every file under each directory
//   named, goes once through the target's harness, whose properties are preconditions; flags are ignored. It
//   checks a corpus, or a finding after a fix, without libFuzzer.
// - Fuzz/run.sh's build (COURIER_FUZZ defined, coverage and AddressSanitizer instrumentation, libFuzzer's runtime
//   without its main linked) hands the arguments after the target's name to libFuzzer (LLVMFuzzerRunDriver)
//   with the target's harness as the callback: from there it is any libFuzzer binary's command line.
#if COURIER_FUZZ
internal import CCourierLibFuzzer
#endif
internal import CourierFuzz
internal import Glibc

func printError(_ message: String) {
    var line = "courier-fuzz: \(message)\n"
    line.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

func fail(_ message: String, status: Int32) -> Never {
    printError(message)
    exit(status)
}

var arguments = CommandLine.arguments
let target: FuzzTarget
if arguments.count > 1, let named = FuzzTarget(rawValue: arguments[1]) {
    target = named
    arguments.remove(at: 1)
    // Before anything reads FuzzTarget.fromEnvironment: the harness and libFuzzer's -jobs/-fork workers find it there.
    setenv(FuzzTarget.environmentVariable, named.rawValue, 1)
} else if let named = FuzzTarget.fromEnvironment {
    target = named
} else {
    let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
    fail("usage: courier-fuzz <target> [inputs and corpus directories] [libFuzzer flags]; targets: \(names)", status: 2)
}

#if COURIER_FUZZ
// libFuzzer keeps argv for the whole run (and may rewrite it), so it gets copies that live as long as the process.
var argc = CInt(arguments.count)
let copies = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: arguments.count + 1)
for (index, argument) in arguments.enumerated() { copies[index] = strdup(argument) }
copies[arguments.count] = nil
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = copies
exit(LLVMFuzzerRunDriver(&argc, &argv, FuzzTarget.testOneInput))
#else
let (flags, paths) = (arguments.dropFirst().filter { $0.hasPrefix("-") }, arguments.dropFirst().filter { !$0.hasPrefix("-") })
if !flags.isEmpty {
    printError("not a fuzzing build (Fuzz/run.sh makes one), ignoring \(flags.joined(separator: " "))")
}
guard !paths.isEmpty else { fail("name the inputs or corpus directories to replay through \(target.rawValue)", status: 2) }
do {
    let count = try target.replay(FuzzTarget.inputFiles(paths))
    print("\(target.rawValue): replayed \(count) inputs, no property broken")
} catch {
    fail("\(error)", status: 1)
}
#endif
