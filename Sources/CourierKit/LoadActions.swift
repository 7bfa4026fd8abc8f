/// The actions one event of a ``LoadStateMachine`` asks for, in order, and the queue its owner performs them from.
///
/// Nearly every event asks for exactly one action (admit, send, deliver), so the first is held inline and only the
/// others (a Retry-After's note and pause, a refused budget's trace, a stale answer's discard) go to an array: the
/// usual load performs its actions without allocating, where an array per event cost a `malloc` and a `free` each
/// (three per load, Benchmarks/README.md).
struct LoadActions<Action> {
    private var head: Action?
    private var tail: [Action] = []

    /// No action.
    init() {}

    /// One action.
    init(_ action: Action) {
        head = action
    }

    var isEmpty: Bool { head == nil }

    /// The actions, in order (for tests and traces; the owner pops them).
    var elements: [Action] {
        guard let head else { return [] }
        return [head] + tail
    }

    /// Takes the next action to perform.
    mutating func popFirst() -> Action? {
        guard let first = head else { return nil }
        head = tail.isEmpty ? nil : tail.removeFirst()
        return first
    }

    mutating func append(_ action: Action) {
        if head == nil { head = action } else { tail.append(action) }
    }

    /// Appends `other`'s actions; when this queue is empty (the usual case) it becomes `other`, moved, not copied
    /// action by action.
    mutating func append(contentsOf other: consuming LoadActions) {
        guard !isEmpty else {
            self = other
            return
        }
        guard let first = other.head else { return }
        tail.append(first)
        tail.append(contentsOf: other.tail)
    }

    static func + (lhs: consuming LoadActions, rhs: consuming LoadActions) -> LoadActions {
        lhs.append(contentsOf: rhs)
        return lhs
    }

    static func += (lhs: inout LoadActions, rhs: consuming LoadActions) {
        lhs.append(contentsOf: rhs)
    }
}

extension LoadActions: Equatable where Action: Equatable {
    static func == (lhs: LoadActions, rhs: LoadActions) -> Bool { lhs.elements == rhs.elements }
}

extension LoadActions: CustomStringConvertible {
    var description: String { elements.description }
}
