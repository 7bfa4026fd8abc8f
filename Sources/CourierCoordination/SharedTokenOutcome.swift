/// How a fleet token store's `obtain` got the token it returned (for metrics and logs).
package enum SharedTokenOutcome: String, Sendable, Hashable {
    /// A usable record another instance (or this one, earlier) wrote: nothing was refreshed.
    case reused
    /// This instance held the fleet's refresh lock and refreshed for every instance.
    case refreshed
    /// Another instance held the lock; this one waited for its record.
    case waited
    /// Redis could not be asked: refreshed in this process, shared with nobody (`on-unavailable: local`).
    case local
}
