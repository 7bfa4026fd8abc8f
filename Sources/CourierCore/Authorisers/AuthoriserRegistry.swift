/// The authoriser plugin types a process knows, by the names policies use.
///
/// A registry is a value: build it at start-up (``builtIn`` plus your own types) and hand it to the policy
/// compiler and the data loader service; an unknown `plugin:` in a policy is then a compile-time diagnostic.
public struct AuthoriserRegistry: Sendable {
    public private(set) var descriptors: [String: AuthoriserTypeDescriptor]
    /// The plugin types that can make live authorisers, by type name (a subset of ``descriptors``' keys).
    public private(set) var plugins: [String: any AuthoriserPlugin.Type] = [:]

    public init(_ descriptors: [AuthoriserTypeDescriptor] = []) {
        self.descriptors = [:]
        for d in descriptors { self.descriptors[d.type] = d }
    }

    /// Registers a type. Registering a name twice is a programming error and traps, so two plugins cannot
    /// silently shadow each other.
    public mutating func register(_ descriptor: AuthoriserTypeDescriptor) {
        precondition(descriptors[descriptor.type] == nil, "authoriser type '\(descriptor.type)' is registered twice")
        descriptors[descriptor.type] = descriptor
    }

    /// A copy with one more type.
    public func registering(_ descriptor: AuthoriserTypeDescriptor) -> AuthoriserRegistry {
        var copy = self
        copy.register(descriptor)
        return copy
    }

    /// Registers a plugin type and its descriptor. A descriptor already registered under the same name
    /// without a plugin (e.g. one of ``builtIn``'s) is replaced by the plugin's; registering a plugin name twice
    /// traps.
    public mutating func register(_ plugin: any AuthoriserPlugin.Type) {
        let descriptor = plugin.descriptor
        precondition(plugins[descriptor.type] == nil, "authoriser plugin '\(descriptor.type)' is registered twice")
        descriptors[descriptor.type] = descriptor
        plugins[descriptor.type] = plugin
    }

    /// A copy with one more plugin type.
    public func registering(_ plugin: any AuthoriserPlugin.Type) -> AuthoriserRegistry {
        var copy = self
        copy.register(plugin)
        return copy
    }

    /// The plugin type registered under `name`, if any.
    public func plugin(named name: String) -> (any AuthoriserPlugin.Type)? { plugins[name] }

    /// Makes a live authoriser for `instance` with the plugin its `plugin:` names. Throws ``AuthoriserError``
    /// (`unknown-plugin` when no plugin is registered under that name, or the plugin's own error), naming the
    /// instance.
    public func makeAuthoriser(for instance: AuthoriserInstance, context: AuthoriserContext) throws -> any Authoriser {
        guard let plugin = plugins[instance.plugin] else {
            let known = plugins.keys.sorted().joined(separator: ", ")
            throw AuthoriserError(
                .unknownPlugin, "no authoriser plugin is registered as '\(instance.plugin)' (known: \(known))",
                authoriser: instance.name
            )
        }
        do {
            return try plugin.make(instance, context: context)
        } catch let error as AuthoriserError {
            throw error.naming(instance.name)
        }
    }

    public subscript(type: String) -> AuthoriserTypeDescriptor? { descriptors[type] }

    /// Registered type names, sorted.
    public var typeNames: [String] { descriptors.keys.sorted() }

    /// The built-in types: static-bearer, oauth2-refresh, oauth2-client-credentials, api-key, basic and
    /// hmac-signature.
    public static let builtIn = AuthoriserRegistry(BuiltInAuthoriserTypes.all)
}
