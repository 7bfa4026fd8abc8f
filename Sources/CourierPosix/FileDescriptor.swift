internal import Synchronization
internal import CourierCore

/// Owns one open file descriptor and closes it at most once.
///
/// Closing twice is harmless (the second call does nothing), so a descriptor number is never closed after
/// the kernel may have handed it to someone else. Dropping the last reference to a descriptor that is
/// still open is a leak: debug builds stop with an assertion naming the descriptor.
package final class FileDescriptor: Sendable, CustomStringConvertible {
    /// The descriptor number. Valid only while ``isOpen``.
    package let rawValue: Int32
    private let open: Atomic<Bool>

    /// Takes ownership of `rawValue`, which must be open.
    package init(takingOwnershipOf rawValue: Int32) {
        precondition(rawValue >= 0, "invalid file descriptor \(rawValue)")
        self.rawValue = rawValue
        self.open = Atomic(true)
    }

    /// True until ``close()`` has been called.
    package var isOpen: Bool { open.load(ordering: .acquiring) }

    /// Closes the descriptor if it is still open. Safe to call from any thread, any number of times.
    package func close() {
        guard open.compareExchange(expected: true, desired: false, ordering: .acquiringAndReleasing).exchanged
        else { return }
        do {
            try Syscall.close(rawValue)
        } catch {
            // The kernel released the descriptor anyway (Linux frees it before reporting EIO and friends).
        }
    }

    /// Runs `body` with the descriptor number, or throws `EBADF` if it was already closed.
    package func withUnsafeDescriptor<R>(_ body: (Int32) throws -> R) throws -> R {
        guard isOpen else { throw SystemCallError(call: "use of closed descriptor", errno: 9 /* EBADF */) }
        return try body(rawValue)
    }

    deinit {
        assert(!open.load(ordering: .acquiring), "leak of open file descriptor \(rawValue)")
        if open.load(ordering: .acquiring) { try? Syscall.close(rawValue) }
    }

    package var description: String { "FileDescriptor(\(rawValue)\(isOpen ? "" : ", closed"))" }
}
