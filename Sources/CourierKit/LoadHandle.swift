/// A request started with ``DataLoader/load(_:completion:)``; cancel it through this handle.
public struct LoadHandle: Sendable {
    let id: Int
    let tracker: LoadTracker

    /// Cancels the request: its completion is called at once with a `cancelled` error (unless it finished).
    public func cancel() { tracker.cancel(id) }
}
