import CourierCore
import CourierLint
import Foundation
import Testing

/// Checks the fields GitHub code scanning requires of an uploaded SARIF file, by parsing the output as
/// untyped JSON (so the test does not share the formatter's Codable types).
@Suite struct SARIFStructureTests {
    func parse(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func outputHasTheStructureCodeScanningRequires() throws {
        let formatter = SARIFFormatter(rules: SampleReport.rules, baseDirectory: SampleReport.base)
        let log = try parse(formatter.format(SampleReport.report))
        #expect(log["$schema"] as? String == "https://json.schemastore.org/sarif-2.1.0.json")
        #expect(log["version"] as? String == "2.1.0")
        let runs = try #require(log["runs"] as? [[String: Any]])
        #expect(runs.count == 1)
        let run = runs[0]
        let driver = try #require((run["tool"] as? [String: Any])?["driver"] as? [String: Any])
        #expect(driver["name"] as? String == "courier")
        let informationUri = try #require(driver["informationUri"] as? String)
        #expect(URL(string: informationUri)?.scheme == "https")
        let rules = try #require(driver["rules"] as? [[String: Any]])
        let ruleIDs = rules.compactMap { $0["id"] as? String }
        #expect(ruleIDs.count == rules.count)
        #expect(Set(ruleIDs).count == ruleIDs.count, "rule ids must be unique")
        for rule in rules {
            #expect((rule["shortDescription"] as? [String: Any])?["text"] is String)
            let level = (rule["defaultConfiguration"] as? [String: Any])?["level"] as? String
            #expect(level == "error" || level == "warning")
        }

        let results = try #require(run["results"] as? [[String: Any]])
        #expect(results.count == SampleReport.report.diagnostics.count)
        for result in results {
            let ruleId = try #require(result["ruleId"] as? String)
            let ruleIndex = try #require(result["ruleIndex"] as? Int)
            #expect(ruleIDs.indices.contains(ruleIndex))
            #expect(ruleIDs[ruleIndex] == ruleId, "ruleIndex must point at the rule named by ruleId")
            let level = try #require(result["level"] as? String)
            #expect(["error", "warning", "note"].contains(level))
            let text = try #require((result["message"] as? [String: Any])?["text"] as? String)
            #expect(!text.isEmpty)
            let locations = try #require(result["locations"] as? [[String: Any]])
            #expect(locations.count == 1)
            let physical = try #require(locations[0]["physicalLocation"] as? [String: Any])
            let uri = try #require((physical["artifactLocation"] as? [String: Any])?["uri"] as? String)
            #expect(!uri.hasPrefix("/") && !uri.hasPrefix("./") && !uri.contains("\\") && !uri.contains(" "))
            let region = try #require(physical["region"] as? [String: Any])
            let startLine = try #require(region["startLine"] as? Int)
            let startColumn = try #require(region["startColumn"] as? Int)
            #expect(startLine >= 1 && startColumn >= 1)
        }
    }

    @Test func uriIsRelativeWithForwardSlashesAndEncoded() {
        #expect(SARIFFormatter.uri(forPath: "./policies/app.yaml") == "policies/app.yaml")
        #expect(SARIFFormatter.uri(forPath: "policies\\win\\a.yaml") == "policies/win/a.yaml")
        #expect(SARIFFormatter.uri(forPath: "my policies/a#1.yaml") == "my%20policies/a%231.yaml")
        #expect(SARIFFormatter.uri(forPath: "/outside/a.yaml") == "file:///outside/a.yaml")
        #expect(SARIFFormatter.uri(forPath: "café.yaml") == "caf%C3%A9.yaml")
    }

    @Test func policyRulesAreListedAndUnique() {
        let ids = SARIFFormatter.policyRules.map(\.id)
        #expect(!ids.isEmpty)
        #expect(Set(ids).count == ids.count)
    }
}
