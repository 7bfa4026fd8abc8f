/// A TCP connection could not be made, or an operation on one failed for a reason other than a system call.
///
/// System-call failures during reads and writes (`ECONNRESET`, `EPIPE`, ...) are thrown as
/// ``SystemCallError``; cancellation is thrown as `CancellationError`.
package struct ConnectionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure, without payload (stable for metrics and exit-code tables).
    package enum Kind: String, Hashable, Sendable {
        /// Every address was tried and each attempt failed; see ``ConnectionError/attempts``.
        case connectFailed = "connect-failed"
        /// No attempt completed within the connect timeout.
        case connectTimeout = "connect-timeout"
        /// There was no address to connect to.
        case noAddresses = "no-addresses"
        /// No byte arrived within the read timeout.
        case readTimeout = "read-timeout"
        /// The peer accepted no byte within the write timeout.
        case writeTimeout = "write-timeout"
        /// The connection was closed (locally, or its event loop shut down) before or during the operation.
        case closed
        /// A second read (or write) was started while one was still in progress on the same connection.
        case concurrentOperation = "concurrent-operation"
    }

    private enum Code: Hashable, Sendable {
        case connectFailed([ConnectAttemptFailure])
        case connectTimeout(Duration, [ConnectAttemptFailure])
        case noAddresses
        case readTimeout(Duration)
        case writeTimeout(Duration)
        case closed
        case concurrentOperation(String)
    }

    private let code: Code

    /// Every attempt failed.
    package static func connectFailed(_ attempts: [ConnectAttemptFailure]) -> ConnectionError {
        ConnectionError(code: .connectFailed(attempts))
    }

    /// The connect timeout passed; `attempts` lists the attempts that failed before it did.
    package static func connectTimeout(_ timeout: Duration, attempts: [ConnectAttemptFailure] = []) -> ConnectionError {
        ConnectionError(code: .connectTimeout(timeout, attempts))
    }

    /// Nothing to connect to.
    package static let noAddresses = ConnectionError(code: .noAddresses)
    /// The connection is closed.
    package static let closed = ConnectionError(code: .closed)

    /// A read waited longer than `timeout`.
    package static func readTimeout(_ timeout: Duration) -> ConnectionError { ConnectionError(code: .readTimeout(timeout)) }

    /// A write waited longer than `timeout`.
    package static func writeTimeout(_ timeout: Duration) -> ConnectionError {
        ConnectionError(code: .writeTimeout(timeout))
    }

    /// `operation` was started while another one of its kind was still running.
    static func concurrentOperation(_ operation: String) -> ConnectionError {
        ConnectionError(code: .concurrentOperation(operation))
    }

    /// The kind of failure.
    package var kind: Kind {
        switch code {
        case .connectFailed: .connectFailed
        case .connectTimeout: .connectTimeout
        case .noAddresses: .noAddresses
        case .readTimeout: .readTimeout
        case .writeTimeout: .writeTimeout
        case .closed: .closed
        case .concurrentOperation: .concurrentOperation
        }
    }

    /// The failed connection attempts, one per address tried (empty for other kinds).
    package var attempts: [ConnectAttemptFailure] {
        switch code {
        case .connectFailed(let attempts), .connectTimeout(_, let attempts): attempts
        default: []
        }
    }

    package var description: String {
        switch code {
        case .connectFailed(let attempts):
            if attempts.count == 1 { return "connect to \(attempts[0])" }
            return "connect failed for every address: " + attempts.map(\.description).joined(separator: "; ")
        case .connectTimeout(let timeout, let attempts):
            let base = "connect timed out after \(timeout)"
            return attempts.isEmpty ? base : base + " (" + attempts.map(\.description).joined(separator: "; ") + ")"
        case .noAddresses: return "no address to connect to"
        case .readTimeout(let timeout): return "no data received for \(timeout)"
        case .writeTimeout(let timeout): return "could not send for \(timeout)"
        case .closed: return "the connection is closed"
        case .concurrentOperation(let operation): return "a \(operation) is already in progress on this connection"
        }
    }
}
