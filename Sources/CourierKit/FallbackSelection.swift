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

    /// What to try, in order.
    let candidates: [Target]
    /// The labels left out because they are cooling down (for the trace).
    let skipped: [String]

    init(host: String, port: Int, fallbacks: [HostAddress], isCoolingDown: (String) -> Bool) {
        var all: [Target] = []
        all.reserveCapacity(1 + fallbacks.count)
        all.append(Target(address: nil, label: HostAddress.label(host: host, port: port)))
        for fallback in fallbacks {
            all.append(Target(address: fallback, label: HostAddress.label(host: fallback.host, port: fallback.port ?? port)))
        }
        // A lone target is tried whether or not it is cooling down: nothing to filter (the usual case).
        guard all.count > 1 else {
            (candidates, skipped) = (all, [])
            return
        }
        let warm = all.filter { !isCoolingDown($0.label) }
        if warm.isEmpty || warm.count == all.count {
            (candidates, skipped) = (all, [])
        } else {
            (candidates, skipped) = (warm, all.filter { target in !warm.contains(target) }.map(\.label))
        }
    }
}
