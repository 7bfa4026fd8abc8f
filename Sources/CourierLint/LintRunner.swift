internal import CourierCore
package import CourierPolicy

/// Lints policy files: expands the paths, compiles each file as a root (following its includes), and
/// collects every diagnostic once.
///
/// An included file that is also linted on its own reports its problems twice, once as a root and once
/// through the file that includes it; ``LintReport`` keeps one copy. The report's file count covers every file
/// read, includes too.
package struct LintRunner: Sendable {
    /// Compiles each file (its registry decides which authoriser plugins are known).
    package var compiler: PolicyCompiler
    /// Expands the paths given on the command line.
    package var finder: PolicyFileFinder

    /// A runner with the built-in authoriser registry and default limits unless told otherwise.
    package init(compiler: PolicyCompiler = PolicyCompiler(), finder: PolicyFileFinder = PolicyFileFinder()) {
        self.compiler = compiler
        self.finder = finder
    }

    /// Lints the files `paths` stand for (see ``PolicyFileFinder``). Throws, before linting anything, when a
    /// path does not exist or a directory cannot be read.
    package func run(paths: [String]) throws(LintInputError) -> LintReport {
        lint(files: try finder.files(for: paths))
    }

    /// Lints exactly these files, each as a root. Paths in the report are cleaned lexically (`./a//b.yaml`
    /// becomes `a/b.yaml`), so the same file reached two ways is one file.
    package func lint(files: [String]) -> LintReport {
        var read: [String] = []
        var diagnostics: [Diagnostic] = []
        for file in files {
            let compilation = compiler.compile(file: file)
            read.append(PathRelativizer.clean(file))
            read += compilation.files.map(PathRelativizer.clean)
            diagnostics += compilation.diagnostics.map {
                var d = $0
                d.location.file = PathRelativizer.clean(d.location.file)
                return d
            }
        }
        return LintReport(files: read, diagnostics: diagnostics)
    }
}
