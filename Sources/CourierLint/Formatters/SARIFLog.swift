internal import CourierCore

/// The subset of the SARIF 2.1.0 object model that `courier lint` writes, as `Codable` structs (property
/// names are SARIF's own).
struct SARIFLog: Codable, Hashable {
    var schema: String
    var version: String
    var runs: [Run]

    enum CodingKeys: String, CodingKey {
        case schema = "$schema"
        case version, runs
    }

    struct Run: Codable, Hashable {
        var tool: Tool
        var columnKind: String
        var results: [Result]
    }

    struct Tool: Codable, Hashable {
        var driver: ToolComponent
    }

    struct ToolComponent: Codable, Hashable {
        var name: String
        var informationUri: String
        var version: String?
        var rules: [ReportingDescriptor]
    }

    struct ReportingDescriptor: Codable, Hashable {
        var id: String
        var name: String
        var shortDescription: Message
        var fullDescription: Message
        var defaultConfiguration: Configuration
        var helpUri: String

        init(_ rule: SARIFFormatter.Rule) {
            id = rule.id
            // SARIF wants a PascalCase-ish identifier here: "unknown-key" -> "UnknownKey".
            name = rule.id.split(separator: "-").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
            shortDescription = Message(text: rule.summary)
            fullDescription = Message(text: rule.summary)
            defaultConfiguration = Configuration(level: rule.severity.rawValue)
            helpUri = SARIFFormatter.informationURI
        }
    }

    struct Configuration: Codable, Hashable {
        var level: String
    }

    struct Message: Codable, Hashable {
        var text: String
    }

    struct Result: Codable, Hashable {
        var ruleId: String
        var ruleIndex: Int
        var level: String
        var message: Message
        var locations: [Location]
    }

    struct Location: Codable, Hashable {
        var physicalLocation: PhysicalLocation
    }

    struct PhysicalLocation: Codable, Hashable {
        var artifactLocation: ArtifactLocation
        var region: Region
    }

    struct ArtifactLocation: Codable, Hashable {
        var uri: String
    }

    struct Region: Codable, Hashable {
        var startLine: Int
        var startColumn: Int
    }
}
