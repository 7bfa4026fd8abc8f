// Copies of the two implementations compared by collections-bench, with Deadline replaced by its UInt64
// nanoseconds (the types are internal to Courier's modules). HandWritten*: the code Courier had before issue 11
// (git show c9c0817:Sources/CourierTransport/Deque.swift, :Sources/CourierPosix/TimerHeap.swift);
// CollectionsTimerHeap: Sources/CourierPosix/TimerHeap.swift over swift-collections' Heap.
import HeapModule

/// A small FIFO ring buffer (O(1) append, prepend and pop at both ends) for wait queues.
struct HandWrittenDeque<Element: Equatable & Sendable>: Sendable {
    private var storage: [Element?] = Array(repeating: nil, count: 8)
    private var head = 0
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    mutating func append(_ element: Element) {
        growIfFull()
        storage[(head + count) & (storage.count - 1)] = element
        count += 1
    }

    mutating func prepend(_ element: Element) {
        growIfFull()
        head = (head - 1 + storage.count) & (storage.count - 1)
        storage[head] = element
        count += 1
    }

    mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = storage[head]
        storage[head] = nil
        head = (head + 1) & (storage.count - 1)
        count -= 1
        return element
    }

    var first: Element? { count > 0 ? storage[head] : nil }

    /// Removes the first occurrence; O(n). Returns whether it was there.
    mutating func remove(_ element: Element) -> Bool {
        guard let offset = (0..<count).first(where: { storage[(head + $0) & (storage.count - 1)] == element }) else {
            return false
        }
        for i in offset..<(count - 1) {
            storage[(head + i) & (storage.count - 1)] = storage[(head + i + 1) & (storage.count - 1)]
        }
        storage[(head + count - 1) & (storage.count - 1)] = nil
        count -= 1
        return true
    }

    private mutating func growIfFull() {
        guard count == storage.count else { return }
        var bigger: [Element?] = Array(repeating: nil, count: storage.count * 2)
        for i in 0..<count { bigger[i] = storage[(head + i) & (storage.count - 1)] }
        storage = bigger
        head = 0
    }
}

/// A binary min-heap of timer deadlines with lazy cancellation.
///
/// Cancelling a timer removes its action (so whatever the action captured is released at once) and leaves
/// the 16-byte heap entry behind; stale entries are skipped when they surface and the heap is rebuilt when
/// they outnumber live timers.
struct HandWrittenTimerHeap<Action> {
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
    mutating func schedule(at deadline: UInt64, _ action: Action) -> UInt64 {
        let id = nextID
        nextID += 1
        actions[id] = action
        heap.append(Entry(deadline: deadline, id: id))
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
    mutating func earliestDeadline() -> UInt64? {
        dropStaleTop()
        return heap.first.map { $0.deadline }
    }

    /// Removes and returns the actions of every live timer due at `now`, earliest first.
    mutating func popExpired(now: UInt64, into expired: inout [Action]) {
        while let top = heap.first, top.deadline <= now {
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


/// The event loop's timers: a min-heap of deadlines (swift-collections' `Heap`) with lazy cancellation.
///
/// `Heap` has no removal of an arbitrary element, so cancelling a timer removes its action (whatever the action
/// captured is released at once) and leaves the 16-byte heap entry behind; stale entries are skipped when they
/// surface and the heap is rebuilt when they outnumber live timers. Timers due at the same instant fire in the
/// order they were scheduled (the id breaks the tie).
struct CollectionsTimerHeap<Action> {
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
    mutating func schedule(at deadline: UInt64, _ action: Action) -> UInt64 {
        let id = nextID
        nextID += 1
        actions[id] = action
        heap.insert(Entry(deadline: deadline, id: id))
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
    mutating func earliestDeadline() -> UInt64? {
        while let top = heap.min, actions[top.id] == nil { _ = heap.popMin() }
        return heap.min.map { $0.deadline }
    }

    /// Removes and returns the actions of every live timer due at `now`, earliest first.
    mutating func popExpired(now: UInt64, into expired: inout [Action]) {
        while let top = heap.min, top.deadline <= now {
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
