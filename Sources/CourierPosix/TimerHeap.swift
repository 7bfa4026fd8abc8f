/// A binary min-heap of timer deadlines with lazy cancellation.
///
/// Cancelling a timer removes its action (so whatever the action captured is released at once) and leaves
/// the 16-byte heap entry behind; stale entries are skipped when they surface and the heap is rebuilt when
/// they outnumber live timers.
struct TimerHeap<Action> {
    private struct Entry {
        var deadline: UInt64
        var id: UInt64
    }

    private var heap: [Entry] = []
    private var actions: [UInt64: Action] = [:]
    private var nextID: UInt64 = 1

    /// Number of timers that have not fired or been cancelled.
    var count: Int { actions.count }

    /// Adds a timer; returns its id.
    mutating func schedule(at deadline: MonotonicInstant, _ action: Action) -> UInt64 {
        let id = nextID
        nextID += 1
        actions[id] = action
        heap.append(Entry(deadline: deadline.nanoseconds, id: id))
        siftUp(heap.count - 1)
        return id
    }

    /// Cancels a timer; returns false when it already fired or was cancelled.
    @discardableResult
    mutating func cancel(_ id: UInt64) -> Bool {
        guard actions.removeValue(forKey: id) != nil else { return false }
        if heap.count > 64 && heap.count > 2 * actions.count { compact() }
        return true
    }

    /// The earliest deadline of a live timer.
    mutating func earliestDeadline() -> MonotonicInstant? {
        dropStaleTop()
        return heap.first.map { MonotonicInstant(nanoseconds: $0.deadline) }
    }

    /// Removes and returns the actions of every live timer due at `now`, earliest first.
    mutating func popExpired(now: MonotonicInstant, into expired: inout [Action]) {
        while let top = heap.first, top.deadline <= now.nanoseconds {
            removeTop()
            if let action = actions.removeValue(forKey: top.id) { expired.append(action) }
        }
    }

    /// Removes every timer.
    mutating func removeAll() {
        heap.removeAll()
        actions.removeAll()
    }

    private mutating func dropStaleTop() {
        while let top = heap.first, actions[top.id] == nil { removeTop() }
    }

    private mutating func compact() {
        heap.removeAll { actions[$0.id] == nil }
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
    }

    private mutating func removeTop() {
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            siftDown(0)
        }
    }

    private func less(_ a: Int, _ b: Int) -> Bool {
        heap[a].deadline < heap[b].deadline || (heap[a].deadline == heap[b].deadline && heap[a].id < heap[b].id)
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard less(child, parent) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count && less(left, smallest) { smallest = left }
            if right < heap.count && less(right, smallest) { smallest = right }
            if smallest == parent { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
