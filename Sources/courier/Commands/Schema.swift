internal import ArgumentParser
internal import CourierPolicy

extension CourierCommand {
    /// `courier schema`: the JSON Schema of the policy language, for yaml-language-server and other editors.
    struct Schema: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the JSON Schema of the policy language.",
            discussion: """
                Save it (courier schema > courier-policy.schema.json) and point yaml-language-server at it, \
                e.g. with a first line '# yaml-language-server: $schema=courier-policy.schema.json' in a policy \
                file. See docs/policy.md.
                """
        )

        func run() async throws {
            let schema = PolicySchema.jsonSchema()
            print(schema, terminator: schema.hasSuffix("\n") ? "" : "\n")
        }
    }
}
