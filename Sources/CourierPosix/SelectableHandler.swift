/// Something registered with an ``EventLoop`` that reacts to readiness of its descriptor.
protocol SelectableHandler: AnyObject, Sendable {
    /// Readiness changed. Called on the loop thread; must not block.
    func selectorReady(_ events: SelectorEvents)
    /// The loop is shutting down while this handler is still registered. Called on the loop thread; the
    /// handler should fail its waiters and close its descriptor.
    func eventLoopDidShutDown()
}
