// collections-bench: the hand-written Deque and TimerHeap Courier had against swift-collections' Deque and a
// TimerHeap over its Heap, on the operation mixes of their hot paths (issue 11). Rounds are interleaved; the
// median ns per operation of each is printed. Run: swift run -c release --package-path Benchmarks collections-bench
import BenchSupport
import DequeModule

/// The connection pool's wait queue at 64 requests in flight on 8 connections: 56 waiters; each round trip
/// appends one request and hands the oldest a connection; one in 64 is cancelled while waiting (removed from the
/// middle) and one in 256 goes back to the front (a stale connection).
func dequeHandWritten(_ operations: Int) -> Int {
    var queue = HandWrittenDeque<UInt64>()
    for id in 0..<56 { queue.append(UInt64(id)) }
    var sum = 0
    for step in 0..<operations {
        let id = UInt64(step + 56)
        queue.append(id)
        if step % 64 == 0 { _ = queue.remove(id - 28) }
        if let first = queue.popFirst() {
            sum &+= Int(truncatingIfNeeded: first)
            if step % 256 == 0 { queue.prepend(first) }
        }
    }
    return sum &+ queue.count
}

func dequeCollections(_ operations: Int) -> Int {
    var queue = Deque<UInt64>()
    for id in 0..<56 { queue.append(UInt64(id)) }
    var sum = 0
    for step in 0..<operations {
        let id = UInt64(step + 56)
        queue.append(id)
        if step % 64 == 0, let index = queue.firstIndex(of: id - 28) { queue.remove(at: index) }
        if let first = queue.popFirst() {
            sum &+= Int(truncatingIfNeeded: first)
            if step % 256 == 0 { queue.prepend(first) }
        }
    }
    return sum &+ queue.count
}

/// The loop's timers at 64 connections: each request arms an idle-read timer 30 s ahead and cancels it when the
/// response arrives (most timers never fire); the loop asks for the earliest deadline and pops expired timers
/// (here, the few that a slow request lets fire) once per batch of 16 events.
typealias Work = @Sendable () -> Void

/// What both timer heaps offer, so that one driver runs them (specialised per type in a release build).
protocol TimerQueue {
    init()
    mutating func schedule(at deadline: UInt64, _ action: @escaping Work) -> UInt64
    @discardableResult mutating func cancel(_ id: UInt64) -> Bool
    mutating func earliestDeadline() -> UInt64?
    mutating func popExpired(now: UInt64, into expired: inout [Work])
    var count: Int { get }
}

extension HandWrittenTimerHeap<Work>: TimerQueue {}
extension CollectionsTimerHeap<Work>: TimerQueue {}

func timers<Queue: TimerQueue>(_ type: Queue.Type, _ operations: Int, action: @escaping Work) -> Int {
    var heap = Queue()
    var live: [UInt64] = []
    live.reserveCapacity(64)
    var fired: [Work] = []
    var sum = 0
    for step in 0..<operations {
        let now = UInt64(step) * 1_000
        live.append(heap.schedule(at: now + 30_000_000_000, action))
        if step % 97 == 0 { _ = heap.schedule(at: now + 500, action) }
        if live.count == 64 {
            for id in live.prefix(63) { heap.cancel(id) }
            live.removeFirst(63)
        }
        if step % 16 == 0 {
            sum &+= Int(truncatingIfNeeded: heap.earliestDeadline() ?? 0)
            heap.popExpired(now: now, into: &fired)
            sum &+= fired.count
            fired.removeAll(keepingCapacity: true)
        }
    }
    return sum &+ heap.count
}

func nanosecondsPerOperation(_ operations: Int, _ body: (Int) -> Int) -> Double {
    let clock = ContinuousClock()
    var result = 0
    let elapsed = clock.measure { result = body(operations) }
    blackHole(result)
    let (seconds, attoseconds) = elapsed.components
    return (Double(seconds) * 1e9 + Double(attoseconds) / 1e9) / Double(operations)
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

// collections-bench [ROUNDS] [NAME]: NAME (e.g. "timers hand-written") runs that one alone, for callgrind.
let arguments = CommandLine.arguments
let rounds = arguments.count > 1 ? Int(arguments[1]) ?? 9 : 9
let only = arguments.count > 2 ? arguments[2] : nil
let operations = 2_000_000
let action: Work = {}
let variants: [(String, (Int) -> Int)] = [
    ("deque hand-written", dequeHandWritten),
    ("deque swift-collections", dequeCollections),
    ("timers hand-written", { timers(HandWrittenTimerHeap<Work>.self, $0, action: action) }),
    ("timers swift-collections", { timers(CollectionsTimerHeap<Work>.self, $0, action: action) }),
]
var results: [String: [Double]] = [:]
for _ in 0..<rounds {
    for (name, body) in variants where only == nil || only == name {
        results[name, default: []].append(nanosecondsPerOperation(operations, body))
    }
}
for (name, _) in variants {
    guard let values = results[name] else { continue }
    print("\(name): median \(median(values)) ns/op, min \(values.min()!), max \(values.max()!) over \(rounds) rounds")
}
