internal import CourierCore
internal import CourierCoordination

/// Carries a load's trace to the fleet's token store while the load's authoriser runs, so that how the token was
/// got (reused, refreshed, waited, local) is a trace event of that load, not only a metric. The store's observer
/// (``FleetLink``) reports to the sink of the task it runs in; a refresh the authoriser runs in a task of its own
/// inherits the sink of the load that started it, and the loads that join it see their own `refreshing` events.
enum SharedTokenTrace {
    @TaskLocal static var sink: (@Sendable (CoordinationEvent.SharedTokenDecision) -> Void)?

    /// The store's outcome, reported to the current load's trace (when a load is authorising).
    static func report(_ outcome: SharedTokenOutcome) {
        guard let sink else { return }
        switch outcome {
        case .reused: sink(.reused)
        case .refreshed: sink(.refreshed)
        case .waited: sink(.waited)
        case .local: sink(.local)
        }
    }
}

extension SharedTokenTrace {
    /// Runs `body` (an authoriser call of one load) with `sink` receiving the store's decisions.
    static func traced<T: Sendable>(
        _ sink: @escaping @Sendable (CoordinationEvent.SharedTokenDecision) -> Void,
        _ body: () async throws(CourierError) -> T
    ) async throws(CourierError) -> T {
        let result: Result<T, CourierError> = await $sink.withValue(sink) {
            do throws(CourierError) {
                return .success(try await body())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}
