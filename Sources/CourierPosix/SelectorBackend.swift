internal import CourierCore

/// Readiness reported by a selector for one registered descriptor.
struct SelectorEvents: OptionSet, Hashable, Sendable {
    let rawValue: UInt8

    /// Bytes (or a connection to accept) may be available.
    static let readable = SelectorEvents(rawValue: 1 << 0)
    /// Buffer space may be available, or a non-blocking connect finished.
    static let writable = SelectorEvents(rawValue: 1 << 1)
    /// The peer shut down its side; reads will return end of file.
    static let readHangup = SelectorEvents(rawValue: 1 << 2)
    /// An error or a full hang-up is pending on the descriptor.
    static let error = SelectorEvents(rawValue: 1 << 3)
}

/// What a registration asks to be told about.
struct SelectorInterest: OptionSet, Hashable, Sendable {
    let rawValue: UInt8

    static let read = SelectorInterest(rawValue: 1 << 0)
    static let write = SelectorInterest(rawValue: 1 << 1)
    static let readWrite: SelectorInterest = [.read, .write]
}

/// One readiness event, tagged with the registration it was reported for.
struct SelectorEvent: Sendable {
    /// The descriptor.
    var fd: Int32
    /// The registration id given to ``SelectorBackend/register(fd:id:interest:)``; the loop drops events
    /// whose id no longer matches the descriptor's current registration (stale events for a descriptor
    /// number that was closed and reused).
    var registrationID: UInt32
    /// What is ready.
    var events: SelectorEvents
}

/// The operating-system readiness API under an ``EventLoop``: epoll on Linux; kqueue can be added as
/// another backend (a `KqueueSelector` file) without touching the loop.
///
/// Registrations are edge-triggered: a descriptor is registered once for everything it will ever wait
/// for, and an event is reported when readiness *changes*. The owner must therefore read or write until
/// the call would block before it waits (see `IOChannel`). `register`, `deregister` and `wakeup` may be
/// called from any thread; `wait` only from the loop's own thread.
protocol SelectorBackend: Sendable {
    /// Starts watching `fd`; events carry `id`.
    func register(fd: Int32, id: UInt32, interest: SelectorInterest) throws(SystemCallError)
    /// Stops watching `fd`. Must be called before the descriptor is closed.
    func deregister(fd: Int32) throws(SystemCallError)
    /// Makes a concurrent or the next `wait` return promptly.
    func wakeup() throws(SystemCallError)
    /// Waits up to `timeout` (nil: forever) and hands each event to `body`. Wake-ups are consumed silently.
    func wait(timeout: Duration?, _ body: (SelectorEvent) -> Void) throws(SystemCallError)
    /// Releases the backend's own descriptors. No other call may follow.
    func close()
}

#if os(Linux)
/// The backend this platform's event loops use.
typealias PlatformSelector = EpollSelector
#endif
