/// The demo's verdict: each scenario states what it expects, and the expectations that did not happen are kept
/// with their scenario's name, so the demo can exit 1 naming exactly what went wrong.
struct DemoChecks {
    /// One expectation that did not hold.
    struct Failure: Sendable, CustomStringConvertible {
        var scenario: String
        /// What was expected, and what happened instead.
        var text: String

        var description: String { "\(scenario): \(text)" }
    }

    private(set) var failures: [Failure] = []
    /// Expectations checked.
    private(set) var count = 0

    /// Records `what` as failed in `scenario` unless `condition` holds; `detail` says what happened instead.
    mutating func expect(_ condition: Bool, _ scenario: String, _ what: String, _ detail: @autoclosure () -> String = "") {
        count += 1
        guard !condition else { return }
        let extra = detail()
        failures.append(Failure(scenario: scenario, text: what + (extra.isEmpty ? "" : " (got: \(extra))")))
    }

    /// The failures of one scenario.
    func failures(in scenario: String) -> [Failure] {
        failures.filter { $0.scenario == scenario }
    }

    var passed: Bool { failures.isEmpty }
}
