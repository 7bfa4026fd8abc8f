package import CourierCore

/// The JSON Schema of the policy language, for editors (yaml-language-server) and `courier schema`.
package enum PolicySchema {
    /// JSON Schema (draft-07, which yaml-language-server handles fully) of the language, generated from the
    /// same key tables the compiler uses; authoriser `settings` are checked per `plugin` type (if/then on
    /// `plugin`) from the registry's descriptors.
    package static func jsonSchema(registry: AuthoriserRegistry = .builtIn) -> String {
        SchemaWriter(registry: registry).document()
    }
}
