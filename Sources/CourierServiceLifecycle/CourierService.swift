public import CourierKit
public import ServiceLifecycle
public import CourierTransport

/// A Courier data-loader service or HTTP client as a swift-service-lifecycle `Service`, so that an app's
/// `ServiceGroup` (a Hummingbird or Vapor app's, say) shuts Courier down with the rest of its services.
///
/// ``run()`` waits until the group asks for a graceful shutdown, then calls the wrapped object's
/// `shutdown(gracePeriod:)`: new loads are refused, loads in flight may finish within the grace period, then
/// every connection is closed and the event-loop thread stopped. When the group cancels instead (a second
/// signal, or a service failing), the grace period ends at once.
///
/// ```swift
/// let service = try DataLoaderService(policyFile: "policies/app.yaml", configuration: .init(userAgent: "MyApp/1.0"))
/// let group = ServiceGroup(
///     services: [CourierService(service), app],
///     gracefulShutdownSignals: [.sigterm],
///     logger: logger
/// )
/// try await group.run()
/// ```
public struct CourierService: Service {
    private let start: @Sendable () async -> Void
    private let shutdown: @Sendable (Duration) async -> Void
    private let isShutDown: @Sendable () -> Bool

    /// How long loads (or requests) in flight may take once the group asks for a graceful shutdown.
    public let gracePeriod: Duration

    /// Wraps a data-loader service.
    ///
    /// - Parameters:
    ///   - service: the service to shut down with the group.
    ///   - gracePeriod: how long its loads in flight may take (``DataLoaderService/defaultGracePeriod`` by
    ///     default, 10 s).
    public init(_ service: DataLoaderService, gracePeriod: Duration = DataLoaderService.defaultGracePeriod) {
        // A backend that cannot be started is logged by the service and left to its loads, which follow the
        // policy's on-unavailable and start it again: the group's other services keep running.
        self.start = { try? await service.start() }
        self.shutdown = { await service.shutdown(gracePeriod: $0) }
        self.isShutDown = { service.isShutDown }
        self.gracePeriod = gracePeriod
    }

    /// Wraps an HTTP client (when an app uses Courier's transport without the data loader).
    ///
    /// - Parameters:
    ///   - client: the client to shut down with the group.
    ///   - gracePeriod: how long its requests in flight may take (``HTTPClient/defaultGracePeriod`` by default,
    ///     10 s).
    public init(_ client: HTTPClient, gracePeriod: Duration = HTTPClient.defaultGracePeriod) {
        self.start = {}
        self.shutdown = { await client.shutdown(gracePeriod: $0) }
        self.isShutDown = { client.isShutDown }
        self.gracePeriod = gracePeriod
    }

    /// Starts what the data-loader service needs (``DataLoaderService/start()``: a policy's coordination
    /// backend), runs until the service group asks for a graceful shutdown (or is cancelled), then shuts Courier
    /// down and returns when it is closed. Never throws: Courier's shutdown cannot fail.
    public func run() async throws {
        await start()
        // Returns at the graceful shutdown; throws when the group cancels instead, which shuts down at once below
        // (the task is cancelled, and a cancelled caller ends the grace period at once).
        try? await gracefulShutdown()
        await shutdown(gracePeriod)
    }

    /// Whether the wrapped service or client has finished shutting down.
    public var isFinished: Bool { isShutDown() }
}
