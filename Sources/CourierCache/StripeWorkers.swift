internal import CourierCore
internal import Synchronization

/// Runs independent per-stripe work of a scan on several threads of its own.
///
/// Garbage collection spends most of its time blocked in the kernel: an `unlink` of a file with data blocks
/// waits for the disk (on the bench's ext4, mounted with `discard`, about 80 µs of waiting against a few µs of
/// system time). One thread removing one file after another waits for each in turn; several threads, each
/// holding a different stripe's lock, overlap the waits. Threads of their own, for the reason ``LockWaiting`` gives: the work blocks, and Dispatch's global
/// queues share their threads with Swift's cooperative pool on Linux. The caller must itself be on a thread that
/// may block (``LockWaiting/onThreadThatMayWait(_:)``): it works too, then waits for the others.
enum StripeWorkers {
    /// `body` applied to every item, the items taken in order by `threads` threads (the calling one included);
    /// the results in the items' order. The first error thrown is rethrown once every thread has stopped, and
    /// stops the others from starting new items (an item under way finishes).
    static func map<Item: Sendable, Output: Sendable>(
        _ items: [Item], threads: Int, _ body: @escaping @Sendable (Item) throws(CacheError) -> Output
    ) throws(CacheError) -> [Output] {
        let shared = Shared<Output>(count: items.count)
        let work: @Sendable () -> Void = {
            while true {
                let index = shared.next.wrappingAdd(1, ordering: .relaxed).oldValue
                guard index < items.count, shared.failure.withLock({ $0 == nil }) else { return }
                do throws(CacheError) {
                    let output = try body(items[index])
                    shared.outputs.withLock { $0[index] = output }
                } catch {
                    shared.failure.withLock { if $0 == nil { $0 = error } }
                }
            }
        }
        let helpers = max(0, min(threads, items.count) - 1)
        // A helper that cannot be started leaves its share to the others (the calling thread always works).
        let started = (0..<helpers).compactMap { _ in try? ThreadOfItsOwn.startJoinable(name: "courier-cache-gc", work) }
        work()
        for thread in started { ThreadOfItsOwn.join(thread) }
        if let failure = shared.failure.withLock({ $0 }) { throw failure }
        return shared.outputs.withLock { $0.map { $0! } }
    }

    /// What the threads share: the next item to take, the outputs so far, the first failure.
    private final class Shared<Output: Sendable>: Sendable {
        let next = Atomic<Int>(0)
        let outputs: Mutex<[Output?]>
        let failure = Mutex<CacheError?>(nil)

        init(count: Int) { outputs = Mutex(Array(repeating: nil, count: count)) }
    }
}
