/// One effective setting of a route, as `courier explain` prints it: the dotted key path of the policy
/// language (`retry.max-attempts`), the value as a policy would write it (`5`, `500ms`, `[GET, HEAD]`), and
/// where it came from.
package struct RouteValue: Hashable, Sendable, Encodable {
    /// The dotted key path, e.g. `retry.backoff.initial`.
    package var key: String
    /// The effective value as a policy writes it.
    package var value: String
    /// Where the value was set.
    package var origin: ValueOrigin

    /// A value with its origin.
    package init(key: String, value: String, origin: ValueOrigin) {
        self.key = key
        self.value = value
        self.origin = origin
    }
}
