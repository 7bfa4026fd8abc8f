/// An authoriser type that policies name in `plugin:`: its descriptor (name and settings, for the compiler and
/// the linter) and a factory for live instances.
///
/// Register custom types at start-up with `AuthoriserRegistry.register(MyPlugin.self)`; a type is usually an
/// `enum` (no instances) whose ``make(_:context:)`` returns a class conforming to ``Authoriser``.
public protocol AuthoriserPlugin: SendableMetatype {
    /// The type's name and the settings it accepts.
    static var descriptor: AuthoriserTypeDescriptor { get }

    /// Makes a live authoriser for `instance`, resolving its secrets through `context`. Throws
    /// ``AuthoriserError`` for a missing or invalid setting or an unresolvable secret.
    static func make(_ instance: AuthoriserInstance, context: AuthoriserContext) throws -> any Authoriser
}
