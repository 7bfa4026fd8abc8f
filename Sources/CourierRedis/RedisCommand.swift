/// One Redis command: its name and arguments, each sent as a bulk string.
///
/// Its description names the command only, never its arguments (an `AUTH` carries a password, a `SET` a token).
package struct RedisCommand: Sendable, Equatable, CustomStringConvertible {
    /// The name first, then the arguments.
    package var arguments: [[UInt8]]

    /// A command from text: `RedisCommand("SET", "key", "value")`.
    package init(_ name: String, _ arguments: String...) {
        self.arguments = [Array(name.utf8)] + arguments.map { Array($0.utf8) }
    }

    /// A command whose arguments are bytes.
    package init(_ name: String, arguments: [[UInt8]]) {
        self.arguments = [Array(name.utf8)] + arguments
    }

    /// The command's name, upper-cased (`GET`).
    package var name: String { String(decoding: arguments.first ?? [], as: UTF8.self).uppercased() }

    /// The bytes sent for this command.
    package var encoded: [UInt8] { RESPEncoder.command(arguments) }

    package var description: String { name }
}
