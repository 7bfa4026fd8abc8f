import Foundation
import PackagePlugin

/// A build-tool plugin: every `swift build` of a target that uses it lints the target's policy files, and their
/// diagnostics are the build's errors and warnings, with file, line and column (SwiftLint's build-tool plugin is
/// the model).
///
/// The policy files are every `*.yaml` and `*.yml` file of the target (its resources among them) and every one
/// below a `policies/` folder of the target, excluded or not. The plugin gives them, by absolute path, to
/// `courier-policy-lint` in one build command, whose output SwiftPM prints: `FILE:LINE:COLUMN: error: …` lines. An
/// error fails the build; warnings are printed and the build goes on. The command's declared output is a Swift file
/// holding one comment, compiled into the target, so SwiftPM runs the command whenever a policy file changed and
/// skips it otherwise. A Swift target only (a C target cannot compile that file); a target with no policy file gets
/// no command. Files a policy includes from outside the target are linted but do not trigger a new run when they
/// alone change.
@main
struct LintPoliciesOnBuild: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) async throws -> [Command] {
        guard let module = target as? SourceModuleTarget else { return [] }
        let policies = Self.policyFiles(of: module)
        guard !policies.isEmpty else { return [] }
        guard module is SwiftSourceModuleTarget else {
            Diagnostics.warning("LintPoliciesOnBuild lints Swift targets only; \(target.name)'s policy files are not linted")
            return []
        }
        let stamp = context.pluginWorkDirectoryURL.appending(path: "CourierPolicyLint.swift")
        return [
            .buildCommand(
                displayName: "Linting \(policies.count) Courier policy file\(policies.count == 1 ? "" : "s") of \(target.name)",
                executable: try context.tool(named: "courier-policy-lint").url,
                arguments: ["--output", stamp.path(percentEncoded: false), "--"]
                    + policies.map { $0.path(percentEncoded: false) },
                inputFiles: policies,
                outputFiles: [stamp]
            )
        ]
    }

    /// The target's `*.yaml` / `*.yml` files and those below its `policies/` folder, once each, sorted.
    static func policyFiles(of module: any SourceModuleTarget) -> [URL] {
        func isPolicy(_ url: URL) -> Bool { ["yaml", "yml"].contains(url.pathExtension.lowercased()) }
        var files = module.sourceFiles.map(\.url).filter(isPolicy)
        let folder = module.directoryURL.appending(path: "policies")
        if let walk = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey]) {
            for case let url as URL in walk where isPolicy(url) {
                if (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true { files.append(url) }
            }
        }
        var seen = Set<String>()
        return files.map(\.standardizedFileURL).filter { seen.insert($0.path(percentEncoded: false)).inserted }
            .sorted { $0.path(percentEncoded: false) < $1.path(percentEncoded: false) }
    }
}
