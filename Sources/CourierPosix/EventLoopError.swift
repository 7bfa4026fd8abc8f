/// An ``EventLoop`` could not take the work it was given.
package struct EventLoopError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case shutDown
    }

    private let code: Code

    /// The loop has been shut down and runs nothing more.
    package static let shutDown = EventLoopError(code: .shutDown)

    package var description: String {
        switch code {
        case .shutDown: "the event loop has been shut down"
        }
    }
}
