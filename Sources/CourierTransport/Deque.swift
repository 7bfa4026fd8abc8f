/// A small FIFO ring buffer (O(1) append, prepend and pop at both ends) for wait queues.
struct Deque<Element: Equatable & Sendable>: Sendable {
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
