public import CCourierTestSupport
import CourierCore
import Foundation
import Synchronization

/// A child process of the test run (a Python peer, the `courier` binary, `openssl`), started with
/// `posix_spawn` and every descriptor but its standard three closed.
///
/// Not Foundation's `Process`: on Linux it lists `/proc/self/fd` on every launch and copies 256 bytes per
/// directory entry, which reads past the end of its buffer and crashes once the test process holds about
/// 1,500 descriptors; its pipe reads stop the process when a signal interrupts them (`EINTR`); and it installs
/// a `SIGCHLD` handler whose signals interrupt other threads' system calls.
public final class ChildProcess: Sendable {
    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        /// `/dev/null`.
        case null
        /// A pipe whose other end the parent holds (``standardInput``, ``standardOutput``, ``standardError``).
        case pipe
        /// A file, created or truncated (output streams only).
        case file(String)
        /// The parent's own descriptor of the same number.
        case inherit
    }

    /// How the child ended.
    public enum Termination: Sendable, Equatable {
        case exited(Int32)
        case signalled(Int32)

        /// The exit code, or the signal's number for a child a signal ended (as Foundation's
        /// `Process.terminationStatus` reports it).
        public var status: Int32 {
            switch self {
            case .exited(let code), .signalled(let code): return code
            }
        }
    }

    public let pid: pid_t
    /// The write end of the child's standard input when it is a pipe (close it with ``closeStandardInput()``).
    public let standardInput: Int32?
    /// The read end of the child's standard output when it is a pipe; closed when this object goes.
    public let standardOutput: Int32?
    /// The read end of the child's standard error when it is a pipe; closed when this object goes.
    public let standardError: Int32?

    private let state: State
    private let inputOpen = Atomic<Bool>(true)

    /// Starts `executable` (a path) with `arguments`, in `directory`, with `environment` (default: the
    /// parent's).
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil,
        stdin: Stream = .null, stdout: Stream = .null, stderr: Stream = .null
    ) throws {
        var parentEnds: [Int32?] = [nil, nil, nil]
        var childEnds: [Int32] = [-1, -1, -1]
        var toClose: [Int32] = []
        defer { for fd in toClose { close(fd) } }
        do {
            for (number, stream) in [stdin, stdout, stderr].enumerated() {
                switch stream {
                case .null:
                    break
                case .inherit:
                    childEnds[number] = Int32(number)
                case .pipe:
                    var ends: [Int32] = [0, 0]
                    _ = try SystemCall.blocking("pipe2") { CCourierTestSupport_pipe(&ends) }
                    let (childEnd, parentEnd) = number == 0 ? (ends[0], ends[1]) : (ends[1], ends[0])
                    childEnds[number] = childEnd
                    parentEnds[number] = parentEnd
                    toClose.append(childEnd)
                case .file(let path):
                    precondition(number > 0, "standard input cannot be a file")
                    let fd = try SystemCall.blocking("open") { open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
                    childEnds[number] = fd
                    toClose.append(fd)
                }
            }
        } catch {
            for fd in parentEnds.compactMap({ $0 }) { close(fd) }
            throw error
        }
        let environment = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        var pid = pid_t()
        let result = withCStrings([executable] + arguments) { argv in
            withCStrings(environment) { envp in
                if let directory {
                    return CCourierTestSupport_spawn(&pid, executable, argv, envp, directory, childEnds[0], childEnds[1], childEnds[2])
                }
                return CCourierTestSupport_spawn(&pid, executable, argv, envp, nil, childEnds[0], childEnds[1], childEnds[2])
            }
        }
        guard result == 0 else {
            for fd in parentEnds.compactMap({ $0 }) { close(fd) }
            throw SystemCallError(call: "posix_spawn", errno: result)
        }
        self.pid = pid
        standardInput = parentEnds[0]
        standardOutput = parentEnds[1]
        standardError = parentEnds[2]
        let state = State()
        self.state = state
        // One thread per child waits for it, so that waiting never holds a cooperative thread.
        let child = pid
        let reaper = Thread {
            var status: Int32 = 0
            var reaped: pid_t = -1
            repeat { reaped = waitpid(child, &status, 0) } while reaped == -1 && errno == EINTR
            let termination: Termination =
                reaped == -1 ? .exited(-1) : (status & 0x7F == 0 ? .exited((status >> 8) & 0xFF) : .signalled(status & 0x7F))
            state.finish(termination)
        }
        reaper.stackSize = 256 << 10
        reaper.start()
    }

    /// The Python the peers run on: the system's `/usr/bin/python3` where there is one (it has the
    /// `cryptography` package CI installs; a pyenv shim earlier in `PATH` costs a bash start per launch), else
    /// the first `python3` in `PATH`.
    public static let python: String? = locate("/usr/bin/python3") ?? locate("python3")

    /// The path of the executable `name` in `PATH` (or `name` itself when it holds a slash), nil when none.
    public static func locate(_ name: String) -> String? {
        if name.contains("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    deinit {
        closeStandardInput()
        for fd in [standardOutput, standardError].compactMap({ $0 }) { close(fd) }
    }

    /// Closes the write end of the child's standard input (the child reads end of file); idempotent.
    public func closeStandardInput() {
        guard let fd = standardInput, inputOpen.exchange(false, ordering: .acquiringAndReleasing) else { return }
        close(fd)
    }

    /// Sends `signal` to the child unless it has already ended.
    public func send(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }

    /// Whether the child has not yet ended (been reaped).
    public var isRunning: Bool { state.termination == nil }

    /// How the child ended, once it has.
    public func termination() async -> Termination {
        await withCheckedContinuation { continuation in state.whenFinished { continuation.resume(returning: $0) } }
    }

    /// ``termination()`` for code that cannot await; blocks the calling thread, so never call it on the
    /// cooperative pool.
    public func waitBlocking() -> Termination {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<Termination?>(nil)
        state.whenFinished { termination in
            result.withLock { $0 = termination }
            done.signal()
        }
        done.wait()
        return result.withLock { $0! }
    }

    private final class State: Sendable {
        private let value = Mutex<(termination: Termination?, waiters: [@Sendable (Termination) -> Void])>((nil, []))

        var termination: Termination? { value.withLock { $0.termination } }

        func finish(_ termination: Termination) {
            let waiters = value.withLock { state in
                state.termination = termination
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter(termination) }
        }

        func whenFinished(_ body: @escaping @Sendable (Termination) -> Void) {
            let finished: Termination? = value.withLock { state in
                if let termination = state.termination { return termination }
                state.waiters.append(body)
                return nil
            }
            if let finished { body(finished) }
        }
    }
}

/// Runs `body` with `strings` as a NULL-terminated array of C strings.
private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
    let pointers = strings.map { strdup($0) } + [nil]
    defer { for pointer in pointers { free(pointer) } }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
