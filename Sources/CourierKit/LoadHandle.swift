/// A request a ``DataLoader`` started: which one it is, and how to cancel it.
public struct LoadHandle: Sendable, Hashable {
    let id: Int
    let tracker: LoadTracker
    /// The request as it was given to the loader.
    public let request: Request

    /// Cancels the request: its caller (completion, delegate or stream) learns at once that it was cancelled,
    /// unless it had already finished.
    public func cancel() { tracker.cancel(id) }

    public static func == (a: LoadHandle, b: LoadHandle) -> Bool { a.id == b.id && a.tracker === b.tracker }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(ObjectIdentifier(tracker))
    }
}
