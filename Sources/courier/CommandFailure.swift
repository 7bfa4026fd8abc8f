internal import Foundation

/// An error a command met while running that is not a usage error (a file it cannot read or write, a directory
/// that is not there): printed on its own, `courier SUBCOMMAND: MESSAGE`, without a usage text, and the process
/// exits with ``status``.
struct CommandFailure: Error, CustomStringConvertible {
    /// The whole line, command name included.
    var message: String
    var status: Int32

    init(_ message: String, status: Int32 = 2) {
        self.message = message
        self.status = status
    }

    var description: String { message }

    /// Why `path` cannot be used, as the system says it (`strerror`), for `errno` as a failed call left it.
    static func reason(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }
}
