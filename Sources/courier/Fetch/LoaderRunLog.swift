import CourierKit
import Synchronization

/// What the data loader tells a `--policy` run about each URL besides its ``Response``: the attempts and wire
/// counts of requests that failed without one (from the service's trace and consumption observers), and, with
/// `-v`, the trace itself on standard error.
///
/// Trace events name the request by a service-wide number, not by the caller's; a fetch tags each load with its
/// URL's index in a task-local value, which the loader's request task inherits and its trace observers see.
/// Consumption records carry the request's source identifier, `courier-fetch#INDEX`.
final class LoaderRunLog: Sendable {
    /// The index of the URL whose load the current task is running.
    @TaskLocal static var index: Int?

    private struct Entry {
        var attempts = 0
        var bytesSent: Int64 = 0
        var bytesReceived: Int64 = 0
    }

    private let entries = Mutex<[Int: Entry]>([:])

    /// Registers the observers on `service`; with `verbose`, every trace event is printed to standard error as
    /// it happens (`#3 attempt 2: retrying in 412ms after status 503`).
    init(service: DataLoaderService, verbose: Bool) {
        service.addTraceObserver { [weak self] event in
            if verbose { StandardError.write(event.description) }
            guard let self, let index = LoaderRunLog.index else { return }
            self.entries.withLock { table in
                table[index, default: Entry()].attempts = max(table[index, default: Entry()].attempts, event.attempt)
            }
        }
        service.addConsumptionObserver { [weak self] consumption in
            guard let self, let index = consumption.sourceIdentifier.flatMap(LoaderRunLog.index(of:)) else { return }
            self.entries.withLock { table in
                table[index, default: Entry()].bytesSent = consumption.bytesSent
                table[index, default: Entry()].bytesReceived = consumption.bytesReceived
            }
        }
    }

    /// The source identifier of the `index`-th URL's requests.
    static func sourceIdentifier(_ index: Int) -> String { "courier-fetch#\(index)" }

    static func index(of sourceIdentifier: String) -> Int? {
        guard sourceIdentifier.hasPrefix("courier-fetch#") else { return nil }
        return Int(sourceIdentifier.dropFirst("courier-fetch#".count))
    }

    /// The attempts the loader made for the `index`-th URL (0 when it made none, or the trace did not say).
    func attempts(_ index: Int) -> Int {
        entries.withLock { $0[index]?.attempts ?? 0 }
    }

    /// The wire counts of the `index`-th URL's request, summed over attempts (nil when none were reported).
    func bytes(_ index: Int) -> (sent: Int64, received: Int64)? {
        entries.withLock { table in table[index].map { ($0.bytesSent, $0.bytesReceived) } }
    }
}
