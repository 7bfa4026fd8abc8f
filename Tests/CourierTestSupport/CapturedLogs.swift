public import Logging
import Synchronization

/// Log lines captured by a ``CapturedLogs/logger(level:)``: a `LogHandler` of the test's own, so tests can run in
/// parallel without bootstrapping swift-log's global `LoggingSystem`.
public final class CapturedLogs: Sendable {
    /// One captured line.
    public struct Entry: Sendable, CustomStringConvertible {
        public var level: Logger.Level
        public var message: String
        public var metadata: [String: String]

        /// The whole line as a handler would print it: level, message and every metadata value.
        public var description: String {
            "\(level) \(message) " + metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
    }

    private let entries = Mutex<[Entry]>([])

    public init() {}

    /// Everything logged so far, in order.
    public var all: [Entry] { entries.withLock { $0 } }

    /// A logger that writes here, at `level` and above.
    public func logger(label: String = "test", level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: label) { _ in Handler(sink: self) }
        logger.logLevel = level
        return logger
    }

    fileprivate func append(_ entry: Entry) { entries.withLock { $0.append(entry) } }

    private struct Handler: LogHandler {
        let sink: CapturedLogs
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            sink.append(Entry(level: event.level, message: "\(event.message)", metadata: merged.mapValues { "\($0)" }))
        }
    }
}
