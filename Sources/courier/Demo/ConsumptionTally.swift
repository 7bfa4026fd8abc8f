internal import CourierKit
internal import Synchronization

/// Adds up what the service's consumption observer reports: requests finished and bytes on the wire (headers
/// included, every attempt counted), for the demo's summary.
final class ConsumptionTally: Sendable {
    struct Totals: Sendable {
        var requests = 0
        var bytesSent: Int64 = 0
        var bytesReceived: Int64 = 0
    }

    private let totals = Mutex(Totals())

    /// Counts one finished request; register it with ``DataLoaderService/addConsumptionObserver(_:)``.
    func record(_ consumption: Consumption) {
        totals.withLock {
            $0.requests += 1
            $0.bytesSent += consumption.bytesSent
            $0.bytesReceived += consumption.bytesReceived
        }
    }

    var current: Totals { totals.withLock { $0 } }
}
