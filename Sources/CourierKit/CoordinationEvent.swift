public import CourierCore

/// What the fleet's coordination did for a request (a ``LoaderEvent/Kind/coordination(_:)`` trace event). Only
/// routes whose rate limit has `scope: fleet`, under a policy with a `coordination` section, report them
/// (docs/fleet.md).
public enum CoordinationEvent: Sendable, CustomStringConvertible {
    /// The fleet's limit for `key` made the request wait `wait` (slots are shared by every instance).
    case fleetWait(key: EndpointKey, wait: Duration)
    /// The coordination backend could not be asked; the policy's `on-unavailable` (`local`, `open` or `closed`)
    /// decides what the request does.
    case unavailable(backend: String, onUnavailable: String)
    /// A Retry-After pause of `key` was shared with every instance of the fleet.
    case pauseShared(key: EndpointKey, duration: Duration)
    /// The authoriser (`share-tokens: true`) took its token from the fleet's store, as `decision` says.
    case sharedToken(authoriser: String, decision: SharedTokenDecision)

    /// How an authoriser with `share-tokens: true` got the token a request was authorised with.
    public enum SharedTokenDecision: String, Sendable, Hashable {
        /// A usable token another instance (or this one, earlier) stored: nothing was refreshed.
        case reused
        /// This instance held the fleet's refresh lock and refreshed the token for every instance.
        case refreshed
        /// Another instance held the refresh lock; this one waited for the token it stored.
        case waited
        /// The store could not be asked: refreshed in this process and shared with nobody (`on-unavailable: local`).
        case local
    }

    /// The event in a few words, as trace lines print it.
    public var description: String {
        switch self {
        case .fleetWait(let key, let wait):
            "the fleet's rate limit of \(key) holds the request \(LoaderEvent.short(wait))"
        case .unavailable(let backend, "local"):
            "the coordination backend \(backend) cannot be asked: the fleet limit is enforced locally, divided by the instances last seen"
        case .unavailable(let backend, "open"):
            "the coordination backend \(backend) cannot be asked: the fleet limit is not enforced (on-unavailable: open)"
        case .unavailable(let backend, let mode):
            "the coordination backend \(backend) cannot be asked (on-unavailable: \(mode))"
        case .pauseShared(let key, let duration):
            "Retry-After shared with the fleet: \(key) pauses \(LoaderEvent.short(duration)) on every instance"
        case .sharedToken(let name, .reused):
            "authoriser '\(name)' reused the fleet's shared token"
        case .sharedToken(let name, .refreshed):
            "authoriser '\(name)' took the fleet's refresh lock and refreshed the shared token for every instance"
        case .sharedToken(let name, .waited):
            "authoriser '\(name)' waited for the token another instance was refreshing"
        case .sharedToken(let name, .local):
            "authoriser '\(name)' refreshed its token in this process: the fleet's store cannot be asked"
        }
    }
}
