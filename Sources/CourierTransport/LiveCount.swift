internal import Synchronization

/// A count of objects alive right now, for leak tests (e.g. the TLS streams of one client).
final class LiveCount: Sendable {
    private let value = Atomic<Int>(0)

    func add(_ delta: Int) { value.add(delta, ordering: .relaxed) }

    var current: Int { value.load(ordering: .relaxed) }
}
