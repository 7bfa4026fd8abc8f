public import CourierCore

/// What one load did, in the policy's words: the attempts it made and how each ended, the waits it took and why,
/// and its authoriser's refreshes. A ``Response`` carries it (``Response/report``), and so does the error of a
/// load that failed without one (`CourierError.report`), so a test reads what the policy made the loader do:
///
/// ```swift
/// #expect(response.report.attempts.map(\.outcome) == [.status(503), .status(200)])
/// #expect(response.report.waits == [.backoff(.seconds(30))])
/// ```
///
/// The waits are the loader's decisions (how long it chose to wait), in the service's clock (`LoaderClock`): with
/// a `ManualClock` they are exact. They are the same figures the trace's `rateLimited` and `retrying` events carry
/// (``LoaderEvent``), kept for every load whether or not anyone observes its trace. Over every hop of a load (a
/// redirect's next request too); a load answered from the cache or shared with an identical one in flight made
/// none of its own attempts.
public struct LoadReport: Hashable, Sendable {
    /// One attempt: its number (1 for the first; a retry after a 401 refresh counts) and how it ended.
    public struct Attempt: Hashable, Sendable {
        /// The attempt's number within its hop, as ``LoaderEvent/attempt`` counts it.
        public var number: Int
        /// How it ended.
        public var outcome: Outcome

        public init(number: Int, outcome: Outcome) {
            self.number = number
            self.outcome = outcome
        }
    }

    /// How an attempt ended.
    public enum Outcome: Hashable, Sendable, CustomStringConvertible {
        /// A response head with this status arrived (a status the route retries, a 401 before a refresh, the answer).
        case status(Int)
        /// It failed without a response, or its body broke off, with an error of this kind.
        case error(CourierError.Kind)

        public var description: String {
            switch self {
            case .status(let status): return "status \(status)"
            case .error(let kind): return "\(kind)"
            }
        }
    }

    /// A wait the load took before an attempt, by cause, with the length the loader decided on (a wait that a
    /// cancellation cut short is reported as decided: the error's report says what the load was waiting for).
    public enum Wait: Hashable, Sendable, CustomStringConvertible {
        /// The endpoint key's rate limit, or a Retry-After pause of the key that another load's response set.
        case rateLimit(Duration)
        /// The retry policy's back-off before the next attempt.
        case backoff(Duration)
        /// The `Retry-After` of this load's own response before the next attempt (capped by the policy), when it
        /// was longer than the back-off.
        case retryAfter(Duration)
        /// The fleet's shared rate limit (`scope: fleet`, docs/fleet.md).
        case fleet(Duration)

        /// How long.
        public var duration: Duration {
            switch self {
            case .rateLimit(let d), .backoff(let d), .retryAfter(let d), .fleet(let d): return d
            }
        }

        public var description: String {
            switch self {
            case .rateLimit(let d): return "rate limit \(LoaderEvent.short(d))"
            case .backoff(let d): return "back-off \(LoaderEvent.short(d))"
            case .retryAfter(let d): return "Retry-After \(LoaderEvent.short(d))"
            case .fleet(let d): return "fleet \(LoaderEvent.short(d))"
            }
        }
    }

    /// A credentials refresh after a 401: the authoriser, and whether this load started it, joined one under way or
    /// found the credentials already replaced.
    public struct Refresh: Hashable, Sendable {
        public var authoriser: String
        public var role: LoaderEvent.RefreshRole

        public init(authoriser: String, role: LoaderEvent.RefreshRole) {
            self.authoriser = authoriser
            self.role = role
        }
    }

    /// What the report holds besides its last attempt, in order: one array, empty (no allocation, one reference to
    /// copy) for a load of one attempt and no wait, nearly all of them.
    private enum Entry: Hashable, Sendable {
        case attempt(Attempt)
        case wait(Wait)
        case refresh(Refresh)
    }

    private var entries: [Entry] = []
    /// The last attempt, inline.
    private var last: Attempt?

    /// An empty report (no attempts, waits or refreshes).
    public init() {}

    /// A report of these attempts, waits and refreshes.
    public init(attempts: [Attempt], waits: [Wait] = [], refreshes: [Refresh] = []) {
        self.entries = attempts.dropLast().map(Entry.attempt) + waits.map(Entry.wait) + refreshes.map(Entry.refresh)
        self.last = attempts.last
    }

    /// The attempts, in order, over every hop of the load.
    public var attempts: [Attempt] {
        let earlier = entries.compactMap { entry -> Attempt? in
            if case .attempt(let attempt) = entry { return attempt }
            return nil
        }
        guard let last else { return earlier }
        return earlier + [last]
    }

    /// The waits, in the order they were taken.
    public var waits: [Wait] {
        entries.compactMap { entry -> Wait? in
            if case .wait(let wait) = entry { return wait }
            return nil
        }
    }

    /// The authoriser's refreshes, in order.
    public var refreshes: [Refresh] {
        entries.compactMap { entry -> Refresh? in
            if case .refresh(let refresh) = entry { return refresh }
            return nil
        }
    }

    public static func == (lhs: LoadReport, rhs: LoadReport) -> Bool {
        lhs.attempts == rhs.attempts && lhs.waits == rhs.waits && lhs.refreshes == rhs.refreshes
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(attempts)
        hasher.combine(waits)
        hasher.combine(refreshes)
    }

    /// The total of the waits of each cause, for a test that checks sums rather than each wait.
    public func waited(_ cause: (Wait) -> Bool) -> Duration {
        waits.filter(cause).reduce(.zero) { $0 + $1.duration }
    }

    // MARK: - For the loader

    /// Attempt `number` got a response head with `status`.
    mutating func attempted(_ number: Int, status: Int) {
        append(Attempt(number: number, outcome: .status(status)))
    }

    /// Attempt `number` failed with `kind`; `afterHead`: its head had arrived and its body broke off, so the
    /// attempt already noted ends with the failure instead.
    mutating func attempted(_ number: Int, failed kind: CourierError.Kind, afterHead: Bool) {
        if afterHead, last?.number == number {
            last?.outcome = .error(kind)
            return
        }
        append(Attempt(number: number, outcome: .error(kind)))
    }

    mutating func waited(_ wait: Wait) {
        entries.append(.wait(wait))
    }

    mutating func refreshed(_ authoriser: String, role: LoaderEvent.RefreshRole) {
        entries.append(.refresh(Refresh(authoriser: authoriser, role: role)))
    }

    private mutating func append(_ attempt: Attempt) {
        if let last { entries.append(.attempt(last)) }
        last = attempt
    }
}

/// A ``LoadReport`` attached to a failure (`CourierError.report`).
final class LoadReportBox: Sendable {
    let report: LoadReport

    init(_ report: LoadReport) {
        self.report = report
    }
}

extension CourierError {
    /// What the load did before it failed (its attempts, waits and refreshes), for a failure a data loader threw;
    /// nil for other errors.
    public var report: LoadReport? {
        (attachment as? LoadReportBox)?.report
    }
}
