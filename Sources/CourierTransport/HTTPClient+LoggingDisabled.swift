public import Logging

extension HTTPClient {
    /// A logger that drops everything, without touching swift-log's global `LoggingSystem`: the default of every
    /// Courier API that takes a logger (a library never bootstraps logging). AsyncHTTPClient's
    /// `HTTPClient.loggingDisabled` is the model.
    public static let loggingDisabled = Logger(label: "courier-do-not-log", factory: { _ in SwiftLogNoOpLogHandler() })
}
