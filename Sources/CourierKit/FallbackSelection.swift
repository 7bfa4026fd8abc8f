internal import CourierCore

/// The connect targets one attempt tries, in order: the URL's own host, then the route's fallbacks, less those
/// cooling down after a failure (all of them when every one is). Pure: which labels are cooling down is asked of
/// the caller, once per target, and only when there is more than one.
struct FallbackSelection: Equatable {
    /// A place to connect to: the URL's own host (`address` nil) or a fallback, with its `host:port` label.
    struct Target: Equatable {
        var address: HostAddress?
        var label: String
    }

    /// The targets to try, in order: the first held inline, the others (only with fallbacks) in an array, so that
    /// a route without fallbacks, the usual one, selects its lone target without allocating.
    struct Candidates: RandomAccessCollection, Equatable {
        let first: Target
        let others: [Target]

        var startIndex: Int { 0 }
        var endIndex: Int { 1 + others.count }
        subscript(position: Int) -> Target { position == 0 ? first : others[position - 1] }
    }

    /// What to try, in order.
    let candidates: Candidates
    /// The labels left out because they are cooling down (for the trace).
    let skipped: [String]

    init(host: String, port: Int, fallbacks: [HostAddress], isCoolingDown: (String) -> Bool) {
        let own = Target(address: nil, label: HostAddress.label(host: host, port: port))
        // A lone target is tried whether or not it is cooling down: nothing to filter (the usual case).
        guard !fallbacks.isEmpty else {
            (candidates, skipped) = (Candidates(first: own, others: []), [])
            return
        }
        var all: [Target] = []
        all.reserveCapacity(1 + fallbacks.count)
        all.append(own)
        for fallback in fallbacks {
            all.append(Target(address: fallback, label: HostAddress.label(host: fallback.host, port: fallback.port ?? port)))
        }
        let warm = all.filter { !isCoolingDown($0.label) }
        if warm.isEmpty || warm.count == all.count {
            (candidates, skipped) = (Candidates(first: own, others: Array(all.dropFirst())), [])
        } else {
            (candidates, skipped) = (
                Candidates(first: warm[0], others: Array(warm.dropFirst())),
                all.filter { target in !warm.contains(target) }.map(\.label)
            )
        }
    }
}
