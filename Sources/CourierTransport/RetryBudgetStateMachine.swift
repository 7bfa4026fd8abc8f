package import CourierCore

/// Counts first attempts and retries over a sliding ten-second window and says whether one more retry fits
/// the policy's budget: retries are allowed while `retries < max(ratio × requests, minPerSecond × 10)` over
/// the window. One budget is kept per service, so a failing backend sees at most that share of retries on top
/// of its traffic however many clients' requests fail at once.
///
/// Pure: the caller passes the current instant.
package struct RetryBudgetStateMachine: Sendable {
    package static let window: Duration = .seconds(10)
    private static let buckets = 10

    private let budget: RetryPolicy.Budget
    private var requests = [Int](repeating: 0, count: buckets)
    private var retries = [Int](repeating: 0, count: buckets)
    private var currentSlot: Int64?
    /// Held fixed-size (see `Deadline`): the loader asks the budget on every request.
    private let origin: Deadline

    package init(budget: RetryPolicy.Budget, origin: ContinuousClock.Instant) {
        self.init(budget: budget, origin: Deadline(origin))
    }

    package init(budget: RetryPolicy.Budget, origin: Deadline) {
        self.budget = budget
        self.origin = origin
    }

    /// Records a first attempt.
    package mutating func recordRequest(now: ContinuousClock.Instant) {
        recordRequest(now: Deadline(now))
    }

    /// Records a first attempt (the loader's form).
    package mutating func recordRequest(now: Deadline) {
        let i = advance(to: now)
        requests[i] += 1
    }

    /// Asks for one retry; when it fits the budget it is recorded and true is returned.
    package mutating func tryRetry(now: ContinuousClock.Instant) -> Bool {
        tryRetry(now: Deadline(now))
    }

    /// Asks for one retry now (the loader's form).
    package mutating func tryRetry(now: Deadline) -> Bool {
        let i = advance(to: now)
        let totalRequests = requests.reduce(0, +)
        let totalRetries = retries.reduce(0, +)
        let allowance = max(budget.ratio * Double(totalRequests), budget.minPerSecond * RetryBudgetStateMachine.window.seconds)
        guard Double(totalRetries) < allowance else { return false }
        retries[i] += 1
        return true
    }

    /// A bucket's length in nanoseconds.
    private static let bucketNanoseconds = window.nanosecondsClamped / Int64(buckets)

    /// Moves the window to `now`, clearing buckets that fell out of it; returns the current bucket.
    private mutating func advance(to now: Deadline) -> Int {
        // Whole buckets since the origin, truncated toward zero, in integers (a `Duration` quotient is a
        // 128-bit division and a `Double`).
        let slot = (now - origin).nanosecondsClamped / Self.bucketNanoseconds
        let n = RetryBudgetStateMachine.buckets
        if let current = currentSlot {
            if slot - current >= Int64(n) {
                for i in 0..<n {
                    requests[i] = 0
                    retries[i] = 0
                }
            } else if slot > current {
                for s in (current + 1)...slot {
                    let i = Int(((s % Int64(n)) + Int64(n)) % Int64(n))
                    requests[i] = 0
                    retries[i] = 0
                }
            }
        }
        if slot > (currentSlot ?? Int64.min) { currentSlot = slot }
        return Int(((max(slot, currentSlot ?? slot) % Int64(n)) + Int64(n)) % Int64(n))
    }
}
