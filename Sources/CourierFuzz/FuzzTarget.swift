// The fuzz targets, by the names Fuzz/run.sh and docs/fuzzing.md give them. A target is a harness: it feeds one
// input to a parser and checks properties, each a precondition, so that a broken one stops the process as a crash
// does, which libFuzzer saves as a finding. The executable courier-fuzz runs a target under libFuzzer (a fuzzing
// build) or replays files through it (an ordinary build); CourierFuzzTests replays the seed corpora.
//
// This module is in Courier's package, not a package of its own, so that the harnesses reach the parsers'
// `package` API; it is no product, so none of it is public.
internal import FoundationEssentials

package enum FuzzTarget: String, CaseIterable, Sendable {
    case response = "FuzzResponse"
    case decoder = "FuzzDecoder"
    case policy = "FuzzPolicy"
    case url = "FuzzURL"
    case record = "FuzzRecord"
    case cacheHeaders = "FuzzCacheHeaders"
    case resp = "FuzzRESP"

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
        }
    }

    /// The harness with the signature of libFuzzer's `LLVMFuzzerTestOneInput`, for `LLVMFuzzerRunDriver`. A C
    /// function pointer captures nothing, so each target has a closure of its own.
    package var testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt {
        switch self {
        case .response: { FuzzTarget.response.run(UnsafeBufferPointer(start: $0, count: $1)); return 0 }
        case .decoder: { FuzzTarget.decoder.run(UnsafeBufferPointer(start: $0, count: $1)); return 0 }
        case .policy: { FuzzTarget.policy.run(UnsafeBufferPointer(start: $0, count: $1)); return 0 }
        case .url: { FuzzTarget.url.run(UnsafeBufferPointer(start: $0, count: $1)); return 0 }
        case .record: { FuzzTarget.record.run(UnsafeBufferPointer(start: $0, count: $1)); return 0 }
        case .cacheHeaders: { FuzzTarget.cacheHeaders.run(UnsafeBufferPointer(start: $0, count: $1)); return 0 }
        case .resp: { FuzzTarget.resp.run(UnsafeBufferPointer(start: $0, count: $1)); return 0 }
        }
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
