/// The authoriser plugin types a process knows, by the names policies use.
///
/// A registry is a value: build it at start-up (``builtIn`` plus your own types) and hand it to the policy
/// compiler and the data loader service; an unknown `plugin:` in a policy is then a compile-time diagnostic.
public struct AuthoriserRegistry: Sendable {
    public private(set) var descriptors: [String: AuthoriserTypeDescriptor]

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

    public subscript(type: String) -> AuthoriserTypeDescriptor? { descriptors[type] }

    /// Registered type names, sorted.
    public var typeNames: [String] { descriptors.keys.sorted() }

    /// The built-in types: static-bearer, oauth2-refresh, oauth2-client-credentials, api-key, basic and
    /// hmac-signature.
    public static let builtIn = AuthoriserRegistry(BuiltInAuthoriserTypes.all)
}
