import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A raw-socket server on 127.0.0.1 whose every byte a test scripts: for hostile and broken servers (bad
/// framing, bodies cut short, resets mid-body, byte-by-byte writers, servers that close idle connections).
///
/// Each accepted connection runs the test's handler on its own thread with blocking I/O, deliberately
/// independent of Courier's event loop. The listener stops when ``stop()`` is called or the value is freed.
public final class ScriptedServer: @unchecked Sendable {
    /// One accepted connection, seen from the server.
    public final class Connection: @unchecked Sendable {
        let fd: Int32
        private var buffered: [UInt8] = []
        public let index: Int

        init(fd: Int32, index: Int) {
            self.fd = fd
            self.index = index
            var tv = timeval(tv_sec: 10, tv_usec: 0)  // no handler can hang a test forever
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        }

        /// Reads one request head (through the blank line) and returns it as text; nil at EOF.
        @discardableResult
        public func readRequestHead() -> String? {
            while true {
                if let end = find([13, 10, 13, 10]) {
                    let head = Array(buffered[..<end])
                    buffered.removeFirst(end + 4)
                    return String(decoding: head, as: UTF8.self)
                }
                guard fill() else { return nil }
            }
        }

        /// Reads exactly `count` body bytes (nil at EOF first).
        public func readBytes(_ count: Int) -> [UInt8]? {
            while buffered.count < count { guard fill() else { return nil } }
            let out = Array(buffered[..<count])
            buffered.removeFirst(count)
            return out
        }

        /// Reads a chunked body (RFC 9112 §7.1) through its last chunk and trailer section, and returns the data;
        /// nil at EOF or on a malformed chunk size first.
        public func readChunkedBody() -> [UInt8]? {
            var body: [UInt8] = []
            while true {
                guard let line = readLine(), let size = Int(line.split(separator: ";").first ?? "", radix: 16), size >= 0 else { return nil }
                if size == 0 {
                    while let trailer = readLine(), !trailer.isEmpty {}
                    return body
                }
                guard let data = readBytes(size), readBytes(2) == [13, 10] else { return nil }
                body += data
            }
        }

        /// One line without its CRLF; nil at EOF first.
        private func readLine() -> String? {
            while true {
                if let end = find([13, 10]) {
                    let line = Array(buffered[..<end])
                    buffered.removeFirst(end + 2)
                    return String(decoding: line, as: UTF8.self)
                }
                guard fill() else { return nil }
            }
        }

        /// Whatever arrives in one read (waiting up to the receive timeout, or `seconds` when given), after any
        /// bytes already buffered; empty at EOF or timeout.
        public func readAvailable(waitingUpTo seconds: Int? = nil) -> [UInt8] {
            if let seconds, !closed {
                var tv = timeval(tv_sec: seconds, tv_usec: 0)
                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            }
            if buffered.isEmpty { _ = fill() }
            defer { buffered.removeAll() }
            return buffered
        }

        /// Whether the client closed its side (reads EOF), waiting up to the receive timeout.
        public func readsEOF() -> Bool {
            if !buffered.isEmpty { return false }
            return !fill()
        }

        public func write(_ text: String) { write(Array(text.utf8)) }

        public func write(_ bytes: [UInt8]) {
            var offset = 0
            while offset < bytes.count && !closed {
                let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                offset += n
            }
        }

        /// Writes one byte at a time with a pause between them.
        public func writeSlowly(_ text: String, pause: Duration = .milliseconds(2)) {
            for b in text.utf8 {
                write([b])
                Thread.sleep(forTimeInterval: Double(pause.components.attoseconds) / 1e18 + Double(pause.components.seconds))
            }
        }

        /// Closes gracefully (FIN).
        public func close() {
            if !closed { shutdown(fd, Int32(SHUT_RDWR)) }
        }

        /// Closes abortively: the client sees a reset (RST).
        public func reset() {
            guard !closed else { return }
            var l = linger(l_onoff: 1, l_linger: 0)
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, socklen_t(MemoryLayout<linger>.size))
            Glibc.close(fd)
            closed = true
        }

        /// Set once ``reset()`` has closed the descriptor: every later call is a no-op, never an operation on
        /// whatever descriptor reuses the number.
        var closed = false

        private func find(_ needle: [UInt8]) -> Int? {
            guard buffered.count >= needle.count else { return nil }
            for i in 0...(buffered.count - needle.count) where buffered[i] == needle[0] {
                if Array(buffered[i..<(i + needle.count)]) == needle { return i }
            }
            return nil
        }

        private func fill() -> Bool {
            guard !closed else { return false }
            var chunk = [UInt8](repeating: 0, count: 65536)
            var n = 0
            repeat { n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) } } while n < 0 && errno == EINTR
            if n <= 0 { return false }
            buffered += chunk[..<n]
            return true
        }
    }

    public let port: Int
    private let listener: Listener

    /// Starts listening; `handler` runs once per accepted connection, on its own thread, and the connection is
    /// closed when it returns.
    public init(handler: @escaping @Sendable (Connection) -> Void) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ServerError.socket(errno) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 128) == 0 else {
            Glibc.close(fd)
            throw ServerError.socket(errno)
        }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        port = Int(UInt16(bigEndian: addr.sin_port))
        let listener = Listener(fd: fd, handler: handler)
        self.listener = listener
        // The thread holds the listener, not the server: a server a test forgets to stop still stops (and its
        // thread ends) when the test lets go of it.
        Thread { listener.acceptLoop() }.start()
    }

    /// Connections accepted so far.
    public var acceptedConnections: Int { listener.acceptedConnections }

    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    public func stop() { listener.stop() }

    deinit { listener.stop() }

    /// The listening socket and its accept loop, which closes the socket when it ends.
    private final class Listener: @unchecked Sendable {
        private let fd: Int32
        private let handler: @Sendable (Connection) -> Void
        private let lock = NSLock()
        private var accepted = 0
        private var stopped = false
        /// Set, under the lock, when the accept loop has closed the socket: ``stop()`` then leaves the number
        /// alone (the kernel may have handed it to someone else).
        private var closed = false

        init(fd: Int32, handler: @escaping @Sendable (Connection) -> Void) {
            self.fd = fd
            self.handler = handler
        }

        var acceptedConnections: Int {
            lock.lock()
            defer { lock.unlock() }
            return accepted
        }

        func stop() {
            lock.lock()
            defer { lock.unlock() }
            guard !stopped else { return }
            stopped = true
            // Wakes the accept loop, which closes the socket.
            if !closed { shutdown(fd, Int32(SHUT_RDWR)) }
        }

        func acceptLoop() {
            defer {
                lock.lock()
                closed = true
                Glibc.close(fd)
                lock.unlock()
            }
            while true {
                let connectionFD = accept(fd, nil, nil)
                if connectionFD < 0 {
                    if errno == EINTR || errno == ECONNABORTED { continue }
                    return
                }
                lock.lock()
                accepted += 1
                let index = accepted
                let isStopped = stopped
                lock.unlock()
                if isStopped {
                    Glibc.close(connectionFD)
                    return
                }
                let connection = Connection(fd: connectionFD, index: index)
                let handler = self.handler
                Thread {
                    handler(connection)
                    if !connection.closed { Glibc.close(connection.fd) }
                }.start()
            }
        }
    }

    public enum ServerError: Error {
        case socket(Int32)
    }
}
