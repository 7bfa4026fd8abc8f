internal import Synchronization

/// Whether a write to standard output failed in this run (said once on standard error; later output is dropped).
enum StandardOutputFailure {
    private static let failed = Mutex(false)

    static var happened: Bool { failed.withLock { $0 } }

    static func record(_ message: String) {
        let first = failed.withLock { already -> Bool in
            defer { already = true }
            return !already
        }
        if first { StandardError.error(message) }
    }
}
