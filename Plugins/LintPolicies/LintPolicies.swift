import Foundation
import PackagePlugin

/// `swift package lint-policies [--strict] [--format text|json|sarif] [PATH...]`: runs `courier lint` over the
/// given paths, or over the package's `policies/` folder when none are given.
@main
struct LintPolicies: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        let tool = try context.tool(named: "courier")
        var passThrough: [String] = []
        var paths: [String] = []
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--strict":
                passThrough.append(argument)
            case "--format":
                guard let value = iterator.next() else { throw LintPoliciesError.missingValue("--format") }
                passThrough += ["--format", value]
            default:
                if argument.hasPrefix("-") { throw LintPoliciesError.unknownOption(argument) }
                paths.append(argument)
            }
        }
        if paths.isEmpty { paths = [context.package.directoryURL.appending(path: "policies").path()] }

        let process = Process()
        process.executableURL = tool.url
        process.arguments = ["lint"] + passThrough + paths
        try process.run()
        process.waitUntilExit()
        switch process.terminationStatus {
        case 0: break
        case 1: throw LintPoliciesError.lintFailed
        default: throw LintPoliciesError.toolFailed(process.terminationStatus)
        }
    }
}

enum LintPoliciesError: Error, CustomStringConvertible {
    case missingValue(String)
    case unknownOption(String)
    case lintFailed
    case toolFailed(Int32)

    var description: String {
        switch self {
        case .missingValue(let option): return "\(option) needs a value"
        case .unknownOption(let option): return "unknown option \(option); accepted: --strict, --format text|json|sarif"
        case .lintFailed: return "the policies have errors (see above)"
        case .toolFailed(let status): return "courier lint could not run (exit status \(status))"
        }
    }
}
