import Foundation
import PackagePlugin

/// `swift package lint-policies [--strict] [--format text|json|sarif] [PATH...]`: runs `courier lint` over the
/// given paths, or over the package's `policies/` folder when none are given.
///
/// Relative paths are taken relative to the package's root, and `courier` runs there, so diagnostics name
/// files as `policies/app.yaml`. The plugin only reads files, so it asks for no write permission; Linux has no
/// plugin sandbox, and macOS's read-only one allows reading the package and running the built tool. It fails
/// (non-zero exit) when linting fails.
@main
struct LintPolicies: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        let tool = try context.tool(named: "courier")
        let root = context.package.directoryURL
        var passThrough: [String] = []
        var paths: [String] = []
        var iterator = arguments.makeIterator()
        var onlyPaths = false
        while let argument = iterator.next() {
            if onlyPaths {
                paths.append(argument)
                continue
            }
            switch argument {
            case "--":
                onlyPaths = true
            case "--strict":
                passThrough.append(argument)
            case "--format":
                guard let value = iterator.next() else { throw LintPoliciesError.missingValue("--format") }
                passThrough += ["--format", value]
            case _ where argument.hasPrefix("--format="):
                passThrough += ["--format", String(argument.dropFirst("--format=".count))]
            default:
                if argument.hasPrefix("-") { throw LintPoliciesError.unknownOption(argument) }
                paths.append(argument)
            }
        }
        if paths.isEmpty {
            guard FileManager.default.fileExists(atPath: root.appending(path: "policies").path()) else {
                throw LintPoliciesError.noPolicies(root.path())
            }
            paths = ["policies"]
        }

        let process = Process()
        process.executableURL = tool.url
        process.currentDirectoryURL = root
        process.arguments = ["lint"] + passThrough + ["--"] + paths
        try process.run()
        process.waitUntilExit()
        guard process.terminationReason == .exit else {
            throw LintPoliciesError.toolCrashed(process.terminationStatus)
        }
        switch process.terminationStatus {
        case 0: break
        case 1: throw LintPoliciesError.lintFailed
        default: throw LintPoliciesError.toolFailed(process.terminationStatus)
        }
    }
}

/// Why `swift package lint-policies` failed.
enum LintPoliciesError: Error, CustomStringConvertible {
    case missingValue(String)
    case unknownOption(String)
    case noPolicies(String)
    case lintFailed
    case toolFailed(Int32)
    case toolCrashed(Int32)

    var description: String {
        switch self {
        case .missingValue(let option): return "\(option) needs a value"
        case .unknownOption(let option):
            return "unknown option \(option); accepted: --strict, --format text|json|sarif, then paths"
        case .noPolicies(let root): return "no paths given and no policies/ folder in \(root)"
        case .lintFailed: return "the policies have errors (see above)"
        case .toolFailed(let status): return "courier lint could not run (exit status \(status); see above)"
        case .toolCrashed(let signal): return "courier lint was killed by signal \(signal)"
        }
    }
}
