// The fuzz targets, by the names Fuzz/run.sh and docs/fuzzing.md give them. A target is a harness: it feeds one
// input to a parser and checks properties, each a precondition, so that a broken one stops the process as a crash
// does, which libFuzzer saves as a finding. The executable courier-fuzz runs a target under libFuzzer (a fuzzing
// build) or replays files through it (an ordinary build); CourierFuzzTests replays the seed corpora.
//
// This module is in Courier's package, not a package of its own, so that the harnesses reach the parsers'
// `package` API; it is no product, so none of it is public.
internal import FoundationEssentials
internal import Glibc

package enum FuzzTarget: String, CaseIterable, Sendable {
    case response = "FuzzResponse"
    case decoder = "FuzzDecoder"
    case policy = "FuzzPolicy"
    case url = "FuzzURL"
    case record = "FuzzRecord"
    case cacheHeaders = "FuzzCacheHeaders"
    case resp = "FuzzRESP"
    case request = "FuzzRequest"

    /// Runs one input through the target's harness.
    package func run(_ input: UnsafeBufferPointer<UInt8>) {
        switch self {
        case .response: fuzzResponse(input)
        case .decoder: fuzzDecoder(input)
        case .policy: fuzzPolicy(input)
        case .url: fuzzURL(input)
        case .record: fuzzRecord(input)
        case .cacheHeaders: fuzzCacheHeaders(input)
        case .resp: fuzzRESP(input)
        case .request: fuzzRequest(input)
        }
    }

    /// The environment variable that names the target to every process of a fuzzing run: courier-fuzz sets it
    /// before handing over to libFuzzer, whose -jobs and -fork workers run argv[0] again without the target's name.
    package static let environmentVariable = "COURIER_FUZZ_TARGET"

    /// The target ``environmentVariable`` names, read once; nil when it names none.
    package static let fromEnvironment: FuzzTarget? = getenv(environmentVariable).flatMap { FuzzTarget(rawValue: String(cString: $0)) }

    /// The harness of the target ``environmentVariable`` names, with the signature of libFuzzer's
    /// `LLVMFuzzerTestOneInput`, for `LLVMFuzzerRunDriver`. A C function pointer captures nothing, so the target is
    /// found through the environment rather than captured; courier-fuzz sets the variable before the run starts.
    package static let testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt = { data, size in
        guard let target = fromEnvironment else { preconditionFailure("\(environmentVariable) names no fuzz target") }
        target.run(UnsafeBufferPointer(start: data, count: size))
        return 0
    }

    /// Runs the bytes of each file through the harness, once each, and returns how many files it ran.
    package func replay(_ files: [String]) throws -> Int {
        for file in files {
            let bytes = [UInt8](try Data(contentsOf: URL(filePath: file)))
            bytes.withUnsafeBufferPointer { run($0) }
        }
        return files.count
    }

    /// The files that libFuzzer reads for these paths: a file itself, a directory every file under it
    /// (recursively), in path order. Throws for a path that does not exist.
    package static func inputFiles(_ paths: [String]) throws -> [String] {
        let fileManager = FileManager.default
        func isDirectory(_ path: String) -> Bool? {
            var isDirectory = false
            return fileManager.fileExists(atPath: path, isDirectory: &isDirectory) ? isDirectory : nil
        }
        var files: [String] = []
        for path in paths {
            switch isDirectory(path) {
            case nil: throw MissingInput(path: path)
            case false?: files.append(path)
            case true?:
                let under = try fileManager.subpathsOfDirectory(atPath: path).sorted().map { path + "/" + $0 }
                files += under.filter { isDirectory($0) == false }
            }
        }
        return files
    }
}

/// A path named for replay that does not exist.
package struct MissingInput: Error, CustomStringConvertible {
    package let path: String
    package var description: String { "\(path): no such file or directory" }
}
