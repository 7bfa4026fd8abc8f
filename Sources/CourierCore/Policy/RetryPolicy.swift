/// When and how a failed attempt is tried again.
public struct RetryPolicy: Hashable, Sendable {
    /// What makes an attempt retryable.
    public enum Condition: Hashable, Sendable, CustomStringConvertible, Comparable {
        /// The host could not be resolved or connected to (the request never reached the server).
        case connectError
        /// A connect, idle or attempt timeout.
        case timeout
        /// The connection was reset or closed before the whole response arrived.
        case connectionLost
        /// The response had this status code.
        case status(Int)

        /// Parses a policy token: `connect-error`, `timeout`, `connection-lost`, or a status code 100–599.
        public init?(token: String) {
            switch token {
            case "connect-error": self = .connectError
            case "timeout": self = .timeout
            case "connection-lost": self = .connectionLost
            default:
                guard let code = Int(token), (100...599).contains(code) else { return nil }
                self = .status(code)
            }
        }

        /// The token a policy file uses for this condition.
        public var description: String {
            switch self {
            case .connectError: return "connect-error"
            case .timeout: return "timeout"
            case .connectionLost: return "connection-lost"
            case .status(let code): return String(code)
            }
        }

        package static let tokens = ["connect-error", "timeout", "connection-lost"]

        public static func < (lhs: Condition, rhs: Condition) -> Bool { lhs.sortKey < rhs.sortKey }
        private var sortKey: Int {
            switch self {
            case .connectError: return 0
            case .timeout: return 1
            case .connectionLost: return 2
            case .status(let c): return 1000 + c
            }
        }
    }

    /// A cap on retries relative to first attempts, so a failing backend is not buried in a retry storm.
    /// Retries are allowed while `retries ≤ ratio × requests` over the last ten seconds, or while fewer than
    /// `minPerSecond` retries per second are being sent (so a quiet client can still retry).
    public struct Budget: Hashable, Sendable {
        public package(set) var ratio: Double
        public package(set) var minPerSecond: Double
        package init(ratio: Double, minPerSecond: Double) {
            self.ratio = ratio
            self.minPerSecond = minPerSecond
        }
        /// Built-in default: 20 % on top of the traffic, at least 10 retries per second.
        public static let builtIn = Budget(ratio: 0.2, minPerSecond: 10)
    }

    /// Total attempts, the first included (1 means no retries).
    public package(set) var maxAttempts: Int
    public package(set) var conditions: Set<Condition>
    /// Methods that may be retried.
    public package(set) var methods: Set<HTTPMethod>
    public package(set) var backoff: BackoffPolicy
    /// Whether a `Retry-After` header sets the delay before the next attempt (it replaces the back-off delay
    /// when longer).
    public package(set) var respectRetryAfter: Bool
    /// The longest `Retry-After` honoured; a longer one is clamped to this (a hostile header cannot park a
    /// client for days).
    public package(set) var retryAfterCap: Duration
    /// The retry budget; nil disables it.
    public package(set) var budget: Budget?
    /// When set, non-idempotent methods in ``methods`` may be retried, and the loader sends this header with
    /// one generated value on every attempt of a request.
    public package(set) var idempotencyKeyHeader: String?

    package init(
        maxAttempts: Int,
        conditions: Set<Condition>,
        methods: Set<HTTPMethod>,
        backoff: BackoffPolicy,
        respectRetryAfter: Bool,
        retryAfterCap: Duration,
        budget: Budget?,
        idempotencyKeyHeader: String?
    ) {
        self.maxAttempts = maxAttempts
        self.conditions = conditions
        self.methods = methods
        self.backoff = backoff
        self.respectRetryAfter = respectRetryAfter
        self.retryAfterCap = retryAfterCap
        self.budget = budget
        self.idempotencyKeyHeader = idempotencyKeyHeader
    }

    /// Built-in defaults: 3 attempts on connect errors, timeouts, 429, 502, 503 and 504, for idempotent
    /// methods, with ``BackoffPolicy/builtIn``, honouring Retry-After up to 5 minutes, within the default budget.
    public static let builtIn = RetryPolicy(
        maxAttempts: 3,
        conditions: [.connectError, .timeout, .status(429), .status(502), .status(503), .status(504)],
        methods: [.get, .head, .put, .delete, .options],
        backoff: .builtIn,
        respectRetryAfter: true,
        retryAfterCap: .seconds(300),
        budget: .builtIn,
        idempotencyKeyHeader: nil
    )

    /// Whether `method` may be retried under this policy.
    package func allowsRetry(of method: HTTPMethod) -> Bool {
        guard methods.contains(method) else { return false }
        return method.isIdempotent || idempotencyKeyHeader != nil
    }

    /// The longest the back-off delays of one request can add up to: the sum of the worst delay before each
    /// retry (`maxAttempts - 1` of them).
    package var worstCaseBackoff: Duration {
        guard maxAttempts > 1 else { return .zero }
        var total = Duration.zero
        for retry in 1..<maxAttempts { total += backoff.worstDelay(beforeRetry: retry) }
        return total
    }
}
