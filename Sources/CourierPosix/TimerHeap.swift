internal import CourierCore
internal import HeapModule

/// The event loop's timers: a min-heap of deadlines (swift-collections' `Heap`) with lazy cancellation.
///
/// `Heap` has no removal of an arbitrary element, so cancelling a timer removes its action (whatever the action
/// captured is released at once) and leaves the 16-byte heap entry behind; stale entries are skipped when they
/// surface and the heap is rebuilt when they outnumber live timers. Timers due at the same instant fire in the
/// order they were scheduled (the id breaks the tie).
struct TimerHeap<Action> {
    private struct Entry: Comparable {
        var deadline: UInt64
        var id: UInt64

        static func < (a: Entry, b: Entry) -> Bool {
            a.deadline < b.deadline || (a.deadline == b.deadline && a.id < b.id)
        }
    }

    private var heap = Heap<Entry>()
    private var actions: [UInt64: Action] = [:]
    private var nextID: UInt64 = 1

    /// Number of timers that have not fired or been cancelled.
    var count: Int { actions.count }

    /// Adds a timer; returns its id.
    mutating func schedule(at deadline: Deadline, _ action: Action) -> UInt64 {
        let id = nextID
        nextID += 1
        actions[id] = action
        heap.insert(Entry(deadline: deadline.nanoseconds, id: id))
        return id
    }

    /// Cancels a timer; returns false when it already fired or was cancelled.
    @discardableResult
    mutating func cancel(_ id: UInt64) -> Bool {
        guard actions.removeValue(forKey: id) != nil else { return false }
        if heap.count > 64 && heap.count > 2 * actions.count { heap.removeAll { actions[$0.id] == nil } }
        return true
    }

    /// The earliest deadline of a live timer.
    mutating func earliestDeadline() -> Deadline? {
        while let top = heap.min, actions[top.id] == nil { _ = heap.popMin() }
        return heap.min.map { Deadline(nanoseconds: $0.deadline) }
    }

    /// Removes and returns the actions of every live timer due at `now`, earliest first.
    mutating func popExpired(now: Deadline, into expired: inout [Action]) {
        while let top = heap.min, top.deadline <= now.nanoseconds {
            _ = heap.popMin()
            if let action = actions.removeValue(forKey: top.id) { expired.append(action) }
        }
    }

    /// Removes every timer.
    mutating func removeAll() {
        heap = Heap()
        actions.removeAll()
    }
}
