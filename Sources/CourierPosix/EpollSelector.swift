internal import CCourierPosix
internal import Glibc
internal import CourierCore

/// The Linux ``SelectorBackend``: one epoll instance plus an eventfd to wake it.
///
/// `epoll_data.u64` packs `(registrationID << 32) | fd`, so an event can be matched against the loop's
/// current registration of that descriptor number and dropped when it belongs to an earlier one.
/// The eventfd is registered with the reserved data value `UInt64.max`.
final class EpollSelector: SelectorBackend {
    private static let wakeupData = UInt64.max
    private static let capacity: Int32 = 256

    private let epoll: FileDescriptor
    private let wakeupFD: FileDescriptor
    /// Used only by the loop thread inside `wait`.
    nonisolated(unsafe) private let buffer: UnsafeMutablePointer<epoll_event>

    init() throws(SystemCallError) {
        let epfd = try Syscall.epollCreate()
        let epoll = FileDescriptor(takingOwnershipOf: epfd)
        let eventfd: Int32
        do {
            eventfd = try Syscall.eventfdCreate()
        } catch {
            epoll.close()
            throw error
        }
        let wakeup = FileDescriptor(takingOwnershipOf: eventfd)
        do {
            try Syscall.epollControl(
                epfd,
                operation: EPOLL_CTL_ADD,
                fd: eventfd,
                events: EPOLLIN.rawValue | EPOLLET.rawValue,
                data: Self.wakeupData
            )
        } catch {
            wakeup.close()
            epoll.close()
            throw error
        }
        self.epoll = epoll
        self.wakeupFD = wakeup
        self.buffer = .allocate(capacity: Int(Self.capacity))
    }

    deinit {
        buffer.deallocate()
        // `close()` normally ran already; FileDescriptor.close is idempotent.
        epoll.close()
        wakeupFD.close()
    }

    func register(fd: Int32, id: UInt32, interest: SelectorInterest) throws(SystemCallError) {
        var events = EPOLLET.rawValue | EPOLLRDHUP.rawValue
        if interest.contains(.read) { events |= EPOLLIN.rawValue }
        if interest.contains(.write) { events |= EPOLLOUT.rawValue }
        let data = UInt64(id) << 32 | UInt64(UInt32(bitPattern: fd))
        try Syscall.epollControl(epoll.rawValue, operation: EPOLL_CTL_ADD, fd: fd, events: events, data: data)
    }

    func deregister(fd: Int32) throws(SystemCallError) {
        try Syscall.epollControl(epoll.rawValue, operation: EPOLL_CTL_DEL, fd: fd, events: 0, data: 0)
    }

    func wakeup() throws(SystemCallError) {
        try Syscall.eventfdSignal(wakeupFD.rawValue)
    }

    func wait(timeout: Duration?, _ body: (SelectorEvent) -> Void) throws(SystemCallError) {
        let milliseconds: Int32
        if let timeout {
            // Round up: waking early just spins the loop once more for nothing.
            let nanos = max(0, timeout.nanosecondsClamped)
            milliseconds = Int32(clamping: (nanos + 999_999) / 1_000_000)
        } else {
            milliseconds = -1
        }
        let count = try Syscall.epollWait(
            epoll.rawValue,
            events: buffer,
            capacity: Self.capacity,
            timeoutMilliseconds: milliseconds
        )
        for index in 0..<count {
            let event = buffer[index]
            let data = event.data.u64
            if data == Self.wakeupData {
                try Syscall.eventfdDrain(wakeupFD.rawValue)
                continue
            }
            var ready: SelectorEvents = []
            let flags = event.events
            if flags & EPOLLIN.rawValue != 0 { ready.insert(.readable) }
            if flags & EPOLLOUT.rawValue != 0 { ready.insert(.writable) }
            if flags & EPOLLRDHUP.rawValue != 0 { ready.insert(.readHangup) }
            if flags & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 { ready.insert(.error) }
            body(
                SelectorEvent(
                    fd: Int32(bitPattern: UInt32(truncatingIfNeeded: data)),
                    registrationID: UInt32(truncatingIfNeeded: data >> 32),
                    events: ready
                )
            )
        }
    }

    func close() {
        epoll.close()
        wakeupFD.close()
    }
}
