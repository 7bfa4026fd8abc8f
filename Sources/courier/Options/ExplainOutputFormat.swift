internal import ArgumentParser

/// `courier explain --format`: a table for people, or JSON for scripts.
enum ExplainOutputFormat: String, CaseIterable, ExpressibleByArgument {
    case text
    case json
}
