package import CourierCore

/// Happy Eyeballs (RFC 8305) connection racing as a pure state machine: events in, actions out, no I/O and
/// no clock reads (the owner passes `now`).
///
/// - Addresses are tried in ``attemptOrder(_:)``: families interleaved, IPv6 first.
/// - The first attempt starts at once; each next one starts ``attemptDelay`` (250 ms, RFC 8305 §5's
///   recommended "Connection Attempt Delay") after the previous one, or immediately when an attempt fails.
/// - The first attempt to connect wins; every other attempt still in flight is cancelled (closed), and one
///   that connects late is closed too.
/// - When every attempt has failed, the result lists each address's failure in attempt order.
/// - The overall timeout and cancellation are events too, so the owner has one place that decides.
///
/// The owner (``TCPConnection/connect(to:timeout:on:)-([SocketAddress],_,_)``) performs the actions: it opens
/// sockets, arms loop timers and closes losers.
package struct HappyEyeballsStateMachine: Sendable {
    /// What the owner must do next.
    package enum Action: Hashable, Sendable {
        /// Open a socket and start a non-blocking connect to `address`; report the outcome with `index`.
        case startAttempt(index: Int, address: SocketAddress)
        /// Call ``nextAttemptTimerFired(now:)`` at `deadline` (earlier timers may be ignored: the machine
        /// checks the time itself).
        case scheduleNextAttempt(at: Deadline)
        /// Close attempt `index` (it lost, or the race was abandoned).
        case cancelAttempt(index: Int)
        /// Attempt `index` won: hand its socket to the caller.
        case succeed(index: Int)
        /// The race is over without a connection.
        case fail(Failure)
    }

    /// Why the race ended without a connection.
    package enum Failure: Hashable, Sendable {
        /// The address list was empty.
        case noAddresses
        /// Every address was tried and failed; one entry per address, in attempt order.
        case allAttemptsFailed([ConnectAttemptFailure])
        /// The owner's timeout fired first; lists the attempts that had already failed.
        case timedOut([ConnectAttemptFailure])
        /// The owner cancelled the race.
        case cancelled
    }

    private struct Racing: Sendable {
        var nextIndex = 0
        var inFlight: Set<Int> = []
        var failures: [Int: ConnectAttemptFailure] = [:]
        var nextAttemptAt: Deadline?
    }

    private enum State: Sendable {
        case idle
        case racing(Racing)
        case finished
    }

    /// The addresses in the order they will be tried.
    package let addresses: [SocketAddress]
    /// Delay between starting one attempt and the next while the previous one is still pending.
    package let attemptDelay: Duration
    private var state = State.idle

    /// Creates a machine for `addresses` (reordered with ``attemptOrder(_:)``).
    package init(addresses: [SocketAddress], attemptDelay: Duration = .milliseconds(250)) {
        self.addresses = Self.attemptOrder(addresses)
        self.attemptDelay = attemptDelay
    }

    /// RFC 8305 §4 ordering: families interleaved, starting with IPv6, each family keeping the order the
    /// resolver gave it (RFC 6724 preference); duplicates dropped.
    package static func attemptOrder(_ addresses: [SocketAddress]) -> [SocketAddress] {
        var seen = Set<SocketAddress>()
        let unique = addresses.filter { seen.insert($0).inserted }
        let v6 = unique.filter { $0.family == .ipv6 }
        let v4 = unique.filter { $0.family == .ipv4 }
        var ordered: [SocketAddress] = []
        ordered.reserveCapacity(unique.count)
        for index in 0..<max(v6.count, v4.count) {
            if index < v6.count { ordered.append(v6[index]) }
            if index < v4.count { ordered.append(v4[index]) }
        }
        ordered += unique.filter { $0.family == .unix }
        return ordered
    }

    /// True once the race ended (won, failed, timed out or cancelled).
    package var isFinished: Bool {
        if case .finished = state { return true }
        return false
    }

    // MARK: - Events

    /// Starts the race.
    package mutating func start(now: Deadline) -> [Action] {
        guard case .idle = state else { return [] }
        guard !addresses.isEmpty else {
            state = .finished
            return [.fail(.noAddresses)]
        }
        var racing = Racing()
        var actions: [Action] = []
        startNext(&racing, now: now, into: &actions)
        state = .racing(racing)
        return actions
    }

    /// The attempt-delay timer fired.
    package mutating func nextAttemptTimerFired(now: Deadline) -> [Action] {
        guard case .racing(var racing) = state, let due = racing.nextAttemptAt, now >= due else { return [] }
        var actions: [Action] = []
        startNext(&racing, now: now, into: &actions)
        state = .racing(racing)
        return actions
    }

    /// Attempt `index` connected.
    package mutating func attemptSucceeded(index: Int) -> [Action] {
        switch state {
        case .idle:
            preconditionFailure("Invalid event: attempt \(index) succeeded before the race started")
        case .finished:
            // Lost the race (or the race was abandoned) but connected anyway: close it.
            return [.cancelAttempt(index: index)]
        case .racing(var racing):
            precondition(racing.inFlight.contains(index), "Invalid event: attempt \(index) is not in flight")
            racing.inFlight.remove(index)
            state = .finished
            return racing.inFlight.sorted().map { .cancelAttempt(index: $0) } + [.succeed(index: index)]
        }
    }

    /// Attempt `index` failed with `error`.
    package mutating func attemptFailed(index: Int, error: SystemCallError, now: Deadline) -> [Action] {
        switch state {
        case .idle:
            preconditionFailure("Invalid event: attempt \(index) failed before the race started")
        case .finished:
            return []
        case .racing(var racing):
            precondition(racing.inFlight.contains(index), "Invalid event: attempt \(index) is not in flight")
            racing.inFlight.remove(index)
            racing.failures[index] = ConnectAttemptFailure(address: addresses[index], error: error)
            var actions: [Action] = []
            if racing.nextIndex < addresses.count {
                // RFC 8305 §5: a failure starts the next attempt without waiting for the delay.
                startNext(&racing, now: now, into: &actions)
                state = .racing(racing)
            } else if racing.inFlight.isEmpty {
                state = .finished
                actions.append(.fail(.allAttemptsFailed(Self.ordered(racing.failures))))
            } else {
                state = .racing(racing)
            }
            return actions
        }
    }

    /// The owner's overall connect timeout fired.
    package mutating func timedOut() -> [Action] {
        switch state {
        case .idle:
            state = .finished
            return [.fail(.timedOut([]))]
        case .finished:
            return []
        case .racing(let racing):
            state = .finished
            return racing.inFlight.sorted().map { .cancelAttempt(index: $0) }
                + [.fail(.timedOut(Self.ordered(racing.failures)))]
        }
    }

    /// The owner gave up (task cancellation).
    package mutating func cancelled() -> [Action] {
        switch state {
        case .idle:
            state = .finished
            return [.fail(.cancelled)]
        case .finished:
            return []
        case .racing(let racing):
            state = .finished
            return racing.inFlight.sorted().map { .cancelAttempt(index: $0) } + [.fail(.cancelled)]
        }
    }

    // MARK: - Helpers

    private func startNext(_ racing: inout Racing, now: Deadline, into actions: inout [Action]) {
        let index = racing.nextIndex
        racing.nextIndex += 1
        racing.inFlight.insert(index)
        actions.append(.startAttempt(index: index, address: addresses[index]))
        if racing.nextIndex < addresses.count {
            let due = now + attemptDelay
            racing.nextAttemptAt = due
            actions.append(.scheduleNextAttempt(at: due))
        } else {
            racing.nextAttemptAt = nil
        }
    }

    private static func ordered(_ failures: [Int: ConnectAttemptFailure]) -> [ConnectAttemptFailure] {
        failures.keys.sorted().map { failures[$0]! }
    }
}
