/// One effective setting of a route, as `courier explain` prints it: the dotted key path of the policy
/// language (`retry.max-attempts`), the value as a policy would write it (`5`, `500ms`, `[GET, HEAD]`), and
/// where it came from.
public struct RouteValue: Hashable, Sendable, Encodable {
    public var key: String
    public var value: String
    public var origin: ValueOrigin

    public init(key: String, value: String, origin: ValueOrigin) {
        self.key = key
        self.value = value
        self.origin = origin
    }
}
