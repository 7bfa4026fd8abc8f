internal import Glibc
internal import Synchronization
package import CourierCore

/// A fixed set of ``EventLoop``s, one thread each, handed out round-robin.
///
/// ```swift
/// let group = try EventLoopGroup(threads: 2)
/// let connection = try await TCPConnection.connect(host: "example.com", port: 80, on: group.next())
/// // ...
/// connection.close()
/// group.shutdown()
/// ```
package final class EventLoopGroup: Sendable {
    /// The loops, in creation order.
    package let loops: [EventLoop]
    private let threads: Mutex<[pthread_t]>
    private let cursor = Atomic<Int>(0)

    /// A process-wide group with one loop, started on first use and never shut down.
    package static let shared: EventLoopGroup = {
        do {
            return try EventLoopGroup(threads: 1, namePrefix: "courier-shared")
        } catch {
            fatalError("cannot start the shared event loop: \(error)")
        }
    }()

    /// Starts `threads` loops (at least one), scheduled as `scheduling` says (see ``EventLoopThreadScheduling``;
    /// a kernel that refuses `batch` leaves the threads as they were).
    ///
    /// - Throws: ``SystemCallError`` when epoll, eventfd or a thread cannot be created.
    package init(
        threads: Int = 1, namePrefix: String = "courier-loop", scheduling: EventLoopThreadScheduling = .adaptive
    ) throws(SystemCallError) {
        precondition(threads >= 1, "an EventLoopGroup needs at least one thread")
        var loops: [EventLoop] = []
        var started: [pthread_t] = []
        do {
            for index in 0..<threads {
                let loop = try EventLoop(index: index, scheduling: scheduling)
                loops.append(loop)
                started.append(try loop.start(name: "\(namePrefix)-\(index)"))
            }
        } catch {
            for loop in loops { loop.initiateShutdown() }
            for thread in started { Syscall.joinThread(thread) }
            throw error
        }
        self.loops = loops
        self.threads = Mutex(started)
    }

    /// The next loop, round-robin.
    package func next() -> EventLoop {
        let index = cursor.wrappingAdd(1, ordering: .relaxed).oldValue
        return loops[index % loops.count]
    }

    /// The loop whose thread is the caller's, if any.
    package var current: EventLoop? {
        loops.first { $0.inEventLoop }
    }

    /// Stops every loop after the work already submitted and joins the threads.
    ///
    /// Descriptors still registered are closed and their waiters fail with ``ConnectionError/closed``.
    /// Calling it again does nothing. Must not be called from one of the group's own loops.
    package func shutdown() {
        precondition(current == nil, "EventLoopGroup.shutdown() called on one of its own loops (it would deadlock)")
        let toJoin = threads.withLock { threads -> [pthread_t] in
            defer { threads.removeAll() }
            return threads
        }
        guard !toJoin.isEmpty else { return }
        for loop in loops { loop.initiateShutdown() }
        for thread in toJoin { Syscall.joinThread(thread) }
    }

    /// ``shutdown()`` without blocking the caller's executor thread: the joins happen on a helper thread.
    package func shutdownGracefully() async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            do {
                let thread = try Syscall.startThread(name: "courier-shutdown") { [self] in
                    shutdown()
                    continuation.resume()
                }
                Syscall.detachThread(thread)
            } catch {
                shutdown()
                continuation.resume()
            }
        }
    }
}
