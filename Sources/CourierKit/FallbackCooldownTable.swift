internal import CourierCore

/// Which connect targets failed recently. A target that failed to resolve or connect is skipped for the
/// cool-down, then tried again. Pure: the owner passes the current instant.
struct FallbackCooldownTable: Sendable {
    private var failedUntil: [String: Deadline] = [:]
    let cooldown: Duration

    init(cooldown: Duration) { self.cooldown = cooldown }

    /// Records that `target` failed at `now`.
    mutating func markFailed(_ target: String, now: Deadline) {
        if failedUntil.count > 1024 { failedUntil = failedUntil.filter { $0.value > now } }
        failedUntil[target] = now + cooldown
    }

    /// Records that `target` worked: it is no longer skipped.
    mutating func markWorking(_ target: String) {
        // Nearly always empty: no hash of the label then.
        guard !failedUntil.isEmpty else { return }
        failedUntil[target] = nil
    }

    /// Whether no target failed, or every one that did has worked since (an expired cool-down still counts until
    /// the target works again or the table is swept).
    var isEmpty: Bool { failedUntil.isEmpty }

    /// Whether `target` is cooling down at `now`.
    func isCoolingDown(_ target: String, now: Deadline) -> Bool {
        guard !failedUntil.isEmpty, let until = failedUntil[target] else { return false }
        return until > now
    }
}
