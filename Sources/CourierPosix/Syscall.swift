internal import CCourierPosix
internal import CourierCore
internal import Glibc

/// Every libc call CourierPosix makes, in one place.
///
/// Each wrapper is `@inline(never)` (so a call site stays small and the call shows up by name in profiles),
/// retries `EINTR`, returns `IOResult.wouldBlock` for `EAGAIN`/`EWOULDBLOCK` (and `EINPROGRESS` for
/// `connect`) where the descriptor is non-blocking, and throws ``SystemCallError`` for every other `errno`.
/// `EBADF` and `EFAULT` can only mean a bug in this module (a closed or foreign descriptor, a bad pointer), so
/// they stop the process instead of being thrown.
enum Syscall {
    // MARK: - Plumbing

    @inline(__always)
    private static func check(_ call: StaticString, _ code: Int32) {
        precondition(code != EBADF && code != EFAULT, "'\(call)' failed with errno \(code): a bug in CourierPosix")
    }

    /// Runs `body` through CourierCore's one system-call wrapper (``SystemCall/run(_:wouldBlockIsValue:_:)``:
    /// `EINTR` retried, other failures thrown); "would block" becomes `IOResult.wouldBlock`.
    @inline(__always)
    private static func retrying<T: FixedWidthInteger>(
        _ call: StaticString,
        wouldBlockIsValue: Bool,
        _ body: () -> T
    ) throws(SystemCallError) -> IOResult<T> {
        guard let result = try SystemCall.run(call, wouldBlockIsValue: wouldBlockIsValue, body) else { return .wouldBlock }
        return .processed(result)
    }

    /// Like `retrying` for calls that never return "would block".
    @inline(__always)
    private static func blocking<T: FixedWidthInteger>(
        _ call: StaticString,
        _ body: () -> T
    ) throws(SystemCallError) -> T {
        guard case .processed(let value) = try retrying(call, wouldBlockIsValue: false, body) else {
            preconditionFailure("unreachable")
        }
        return value
    }

    // MARK: - Sockets

    /// `socket(2)`; always `SOCK_NONBLOCK | SOCK_CLOEXEC`.
    @inline(never)
    static func socket(domain: Int32, type: Int32) throws(SystemCallError) -> Int32 {
        let flags = Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        return try blocking("socket") { Glibc.socket(domain, type | flags, 0) }
    }

    /// `connect(2)` on a non-blocking socket: `wouldBlock` means the handshake is under way.
    ///
    /// `EINTR` is treated like `EINPROGRESS`: the kernel keeps connecting, and retrying would give `EALREADY`.
    @inline(never)
    static func connect(_ fd: Int32, to address: SocketAddress) throws(SystemCallError) -> IOResult<Void> {
        let result = address.withSockAddr { pointer, length in Glibc.connect(fd, pointer, length) }
        if result == 0 { return .processed(()) }
        let code = errno
        // A Unix domain socket never connects in the background: its EAGAIN is a full backlog, an error.
        if code == EINPROGRESS || code == EINTR || (code == EAGAIN && address.family != .unix) { return .wouldBlock }
        check("connect", code)
        throw SystemCallError(call: "connect", errno: code)
    }

    /// `bind(2)`.
    @inline(never)
    static func bind(_ fd: Int32, to address: SocketAddress) throws(SystemCallError) {
        _ = try blocking("bind") { address.withSockAddr { Glibc.bind(fd, $0, $1) } }
    }

    /// `listen(2)`.
    @inline(never)
    static func listen(_ fd: Int32, backlog: Int32) throws(SystemCallError) {
        _ = try blocking("listen") { Glibc.listen(fd, backlog) }
    }

    /// `accept4(2)` with `SOCK_NONBLOCK | SOCK_CLOEXEC`.
    @inline(never)
    static func accept(_ fd: Int32) throws(SystemCallError) -> IOResult<Int32> {
        let flags = Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        return try retrying("accept4", wouldBlockIsValue: true) { CCourierPosix_accept4(fd, nil, nil, flags) }
    }

    /// `recv(2)`; `processed(0)` is end of file.
    @inline(never)
    static func recv(
        _ fd: Int32,
        into buffer: UnsafeMutableRawBufferPointer,
        flags: Int32 = 0
    ) throws(SystemCallError) -> IOResult<Int> {
        try retrying("recv", wouldBlockIsValue: true) { Glibc.recv(fd, buffer.baseAddress, buffer.count, flags) }
    }

    /// `send(2)` with `MSG_NOSIGNAL`, so a peer that went away gives `EPIPE` instead of killing the process.
    @inline(never)
    static func send(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws(SystemCallError) -> IOResult<Int> {
        try retrying("send", wouldBlockIsValue: true) {
            Glibc.send(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
        }
    }

    /// `sendmsg(2)` of several buffers at once, with `MSG_NOSIGNAL`.
    @inline(never)
    static func sendVectored(_ fd: Int32, _ iovecs: UnsafeMutableBufferPointer<iovec>) throws(SystemCallError) -> IOResult<Int> {
        var message = msghdr()
        message.msg_iov = iovecs.baseAddress
        message.msg_iovlen = iovecs.count
        return try retrying("sendmsg", wouldBlockIsValue: true) { Glibc.sendmsg(fd, &message, Int32(MSG_NOSIGNAL)) }
    }

    /// `shutdown(2)`; `ENOTCONN` (the peer already went away) is not an error here.
    @inline(never)
    static func shutdown(_ fd: Int32, how: Int32) throws(SystemCallError) {
        if Glibc.shutdown(fd, how) == 0 { return }
        let code = errno
        if code == ENOTCONN { return }
        check("shutdown", code)
        throw SystemCallError(call: "shutdown", errno: code)
    }

    /// `close(2)`. On Linux the descriptor is released even when `close` reports `EINTR`, so it is never
    /// retried (a retry could close a descriptor another thread just opened).
    @inline(never)
    static func close(_ fd: Int32) throws(SystemCallError) {
        if Glibc.close(fd) == 0 { return }
        let code = errno
        if code == EINTR { return }
        check("close", code)
        throw SystemCallError(call: "close", errno: code)
    }

    /// `getsockopt(2)` for an `Int32` option.
    @inline(never)
    static func getIntOption(_ fd: Int32, level: Int32, name: Int32) throws(SystemCallError) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        _ = try blocking("getsockopt") { Glibc.getsockopt(fd, level, name, &value, &length) }
        return value
    }

    /// `setsockopt(2)` for an `Int32` option.
    @inline(never)
    static func setIntOption(_ fd: Int32, level: Int32, name: Int32, value: Int32) throws(SystemCallError) {
        var value = value
        _ = try blocking("setsockopt") {
            Glibc.setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    /// `getsockname(2)`.
    @inline(never)
    static func localAddress(_ fd: Int32) throws(SystemCallError) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = try blocking("getsockname") {
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.getsockname(fd, $0, &length) }
            }
        }
        return SocketAddress(storage: storage)
    }

    /// `getpeername(2)`.
    @inline(never)
    static func remoteAddress(_ fd: Int32) throws(SystemCallError) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = try blocking("getpeername") {
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.getpeername(fd, $0, &length) }
            }
        }
        return SocketAddress(storage: storage)
    }

    // MARK: - Address text

    /// `inet_pton(3)` for IPv4; nil when `text` is not a dotted quad.
    @inline(never)
    static func parseIPv4(_ text: String) -> in_addr? {
        var address = in_addr()
        return inet_pton(AF_INET, text, &address) == 1 ? address : nil
    }

    /// `inet_pton(3)` for IPv6; nil when `text` is not an IPv6 literal.
    @inline(never)
    static func parseIPv6(_ text: String) -> in6_addr? {
        var address = in6_addr()
        return inet_pton(AF_INET6, text, &address) == 1 ? address : nil
    }

    /// `inet_ntop(3)`.
    @inline(never)
    static func formatAddress(family: Int32, _ address: UnsafeRawPointer) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        return buffer.withUnsafeMutableBufferPointer { out in
            guard inet_ntop(family, address, out.baseAddress, socklen_t(out.count)) != nil else { return "?" }
            return String(cString: out.baseAddress!)
        }
    }

    // MARK: - Error text

    /// `gai_strerror(3)`.
    @inline(never)
    static func resolverMessage(_ code: Int32) -> String {
        String(cString: gai_strerror(code))
    }

    // MARK: - epoll and eventfd

    /// `epoll_create1(EPOLL_CLOEXEC)`.
    @inline(never)
    static func epollCreate() throws(SystemCallError) -> Int32 {
        try blocking("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
    }

    /// `epoll_ctl(2)`.
    @inline(never)
    static func epollControl(
        _ epfd: Int32,
        operation: Int32,
        fd: Int32,
        events: UInt32,
        data: UInt64
    ) throws(SystemCallError) {
        var event = epoll_event()
        event.events = events
        event.data.u64 = data
        _ = try blocking("epoll_ctl") { epoll_ctl(epfd, operation, fd, &event) }
    }

    /// `epoll_wait(2)`; `timeoutMilliseconds` -1 waits forever. `EINTR` returns 0 events (the loop recomputes
    /// its timers and comes back) rather than waiting the whole timeout again.
    @inline(never)
    static func epollWait(
        _ epfd: Int32,
        events: UnsafeMutablePointer<epoll_event>,
        capacity: Int32,
        timeoutMilliseconds: Int32
    ) throws(SystemCallError) -> Int {
        let result = epoll_wait(epfd, events, capacity, timeoutMilliseconds)
        if result >= 0 { return Int(result) }
        let code = errno
        if code == EINTR { return 0 }
        check("epoll_wait", code)
        throw SystemCallError(call: "epoll_wait", errno: code)
    }

    /// `eventfd(2)`, non-blocking and close-on-exec.
    @inline(never)
    static func eventfdCreate() throws(SystemCallError) -> Int32 {
        try blocking("eventfd") { eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK)) }
    }

    /// Adds 1 to an eventfd counter; a full counter (`EAGAIN`) already means "wake up", so it is fine.
    @inline(never)
    static func eventfdSignal(_ fd: Int32) throws(SystemCallError) {
        var one: UInt64 = 1
        _ = try retrying("write", wouldBlockIsValue: true) { Glibc.write(fd, &one, 8) }
    }

    /// Resets an eventfd counter to zero.
    @inline(never)
    static func eventfdDrain(_ fd: Int32) throws(SystemCallError) {
        var value: UInt64 = 0
        _ = try retrying("read", wouldBlockIsValue: true) { Glibc.read(fd, &value, 8) }
    }

    // MARK: - Time

    /// `clock_gettime(CLOCK_REALTIME)`, for `sem_timedwait` deadlines.
    @inline(never)
    static func realtimeNow() -> timespec {
        var now = timespec()
        let result = clock_gettime(CLOCK_REALTIME, &now)
        precondition(result == 0, "clock_gettime(CLOCK_REALTIME) failed")
        return now
    }

    // MARK: - Name resolution

    /// `getaddrinfo(3)` for TCP over IPv4 and IPv6; blocking, so never call it on an event-loop thread.
    @inline(never)
    static func getaddrinfo(host: String, port: Int) throws(ResolveError) -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_TCP)
        var list: UnsafeMutablePointer<addrinfo>?
        var code: Int32
        var savedErrno: Int32 = 0
        repeat {
            code = Glibc.getaddrinfo(host, String(port), &hints, &list)
            savedErrno = errno
        } while code == EAI_SYSTEM && savedErrno == EINTR
        guard code == 0 else { throw ResolveError(getaddrinfoCode: code, errno: savedErrno, host: host) }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        var cursor = list
        while let entry = cursor {
            if let address = entry.pointee.ai_addr, let parsed = SocketAddress(sockaddr: address),
                !addresses.contains(parsed)
            {
                addresses.append(parsed)
            }
            cursor = entry.pointee.ai_next
        }
        return addresses
    }

    // MARK: - Descriptors of this process

    /// Counts the entries of `/proc/self/fd`, not counting the one this count uses itself; with `notOnDisk`, only
    /// those whose link is not a path (`socket:[…]`, `pipe:[…]`, `anon_inode:[…]`).
    @inline(never)
    static func countOpenDescriptors(notOnDisk: Bool) throws(SystemCallError) -> Int {
        var directory: OpaquePointer?
        repeat {
            directory = opendir("/proc/self/fd")
        } while directory == nil && errno == EINTR
        guard let directory else { throw SystemCallError(call: "opendir", errno: errno) }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            // Only the name's first byte, read in place: `entry.pointee.d_name` would copy all 256 bytes of the
            // field, but the kernel packs entries by `d_reclen`, so the last one of a buffer can end a page before
            // them (a read past it faulted in a test run).
            let name = UnsafeRawPointer(entry) + MemoryLayout<dirent>.offset(of: \dirent.d_name)!
            guard name.load(as: UInt8.self) != UInt8(ascii: ".") else { continue }
            if notOnDisk {
                // The link's first byte is enough: a path starts with "/". A descriptor closed since the listing
                // (ENOENT) is not counted.
                var first: CChar = 0
                let length = readlinkat(dirfd(directory), name.assumingMemoryBound(to: CChar.self), &first, 1)
                if length < 1 || first == CChar(UInt8(ascii: "/")) { continue }
            }
            count += 1
        }
        // The directory's own descriptor is among the entries (a path, so not counted with `notOnDisk`).
        return notOnDisk ? count : count - 1
    }

    // MARK: - Threads and semaphores

    /// `sched_setscheduler(2)`: the calling thread's policy becomes `SCHED_BATCH` (no preemption when it wakes).
    static func setBatchScheduling() throws(SystemCallError) {
        _ = try SystemCall.blocking("sched_setscheduler") { CCourierPosix_setBatchScheduling() }
    }

    /// Blocks the calling thread for `nanoseconds` (used by a test seam only); a signal that interrupts the
    /// sleep resumes it for the time left.
    static func sleep(nanoseconds: Int) {
        var request = timespec(tv_sec: nanoseconds / 1_000_000_000, tv_nsec: nanoseconds % 1_000_000_000)
        var remaining = timespec()
        // The wrapper retries EINTR; each retry sleeps only what the interrupted call had left. EINVAL cannot
        // happen for a non-negative count, so there is nothing to report.
        _ = try? SystemCall.blocking("nanosleep") { () -> Int32 in
            let result = nanosleep(&request, &remaining)
            if result == -1 { request = remaining }
            return result
        }
    }

    /// The calling thread back to `SCHED_OTHER`.
    static func setNormalScheduling() throws(SystemCallError) {
        _ = try SystemCall.blocking("sched_setscheduler") { CCourierPosix_setNormalScheduling() }
    }

    /// Starts a joinable thread running `body` (``ThreadOfItsOwn``, in CourierCore, starts every thread).
    static func startThread(name: String, _ body: @escaping @Sendable () -> Void) throws(SystemCallError) -> pthread_t {
        try ThreadOfItsOwn.startJoinable(name: name, body)
    }

    /// Waits for `thread` to finish.
    @inline(never)
    static func joinThread(_ thread: pthread_t) {
        let code = pthread_join(thread, nil)
        precondition(code == 0, "pthread_join failed with \(code)")
    }

    /// Lets `thread` clean up after itself when it finishes.
    @inline(never)
    static func detachThread(_ thread: pthread_t) {
        let code = pthread_detach(thread)
        precondition(code == 0, "pthread_detach failed with \(code)")
    }

    /// `sched_yield(2)`: lets another runnable thread on this core run (it cannot fail on Linux).
    static func yieldThread() {
        _ = sched_yield()
    }

    /// The calling thread's id.
    static func currentThread() -> pthread_t {
        pthread_self()
    }

    /// `sem_init(3)` for a process-private semaphore.
    @inline(never)
    static func semaphoreInit(_ semaphore: UnsafeMutablePointer<sem_t>) {
        let result = sem_init(semaphore, 0, 0)
        precondition(result == 0, "sem_init failed")
    }

    /// `sem_destroy(3)`.
    @inline(never)
    static func semaphoreDestroy(_ semaphore: UnsafeMutablePointer<sem_t>) {
        _ = sem_destroy(semaphore)
    }

    /// `sem_post(3)`.
    @inline(never)
    static func semaphorePost(_ semaphore: UnsafeMutablePointer<sem_t>) {
        let result = sem_post(semaphore)
        precondition(result == 0, "sem_post failed with errno \(errno)")
    }

    /// `sem_timedwait(3)`; returns false when `seconds` passed without a post.
    @inline(never)
    static func semaphoreWait(_ semaphore: UnsafeMutablePointer<sem_t>, seconds: Int) -> Bool {
        var deadline = realtimeNow()
        deadline.tv_sec += seconds
        while true {
            if sem_timedwait(semaphore, &deadline) == 0 { return true }
            let code = errno
            if code == EINTR { continue }
            if code == ETIMEDOUT { return false }
            preconditionFailure("sem_timedwait failed with errno \(code)")
        }
    }
}
