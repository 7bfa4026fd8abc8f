/// A request for a fleet-limited key, counted as it arrives (``FleetCoordinator/arrive(endpointKey:limit:now:)``):
/// either it took a slot this process had leased, and goes at once with no call and no suspension, or it is to be
/// admitted by ``FleetCoordinator/admit(_:limit:maxWait:)``. Split so that the common case under a busy limit (a
/// leased slot) costs the loader one lock and no async call.
package struct FleetArrival: Sendable {
    /// The Redis key of the endpoint key's limit.
    let key: String
    /// Whether a leased slot admitted the request.
    package let leased: Bool
}
