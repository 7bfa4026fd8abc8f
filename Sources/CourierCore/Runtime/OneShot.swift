internal import Synchronization

/// A value delivered at most once to one waiter: the first `resume` wins, later ones are ignored. Lets a caller
/// resume at once when its work is cancelled or times out, even if the work itself never answers (a load's
/// authoriser, a record-store operation waiting on a thread of its own).
///
/// The continuation is an unsafe one: many loads wait on a one-shot, and a checked continuation allocates a
/// canary per wait. The lock and `done` already make the resume happen exactly once; `wait` has one caller.
package final class OneShot<Value: Sendable>: Sendable {
    private struct State {
        var continuation: UnsafeContinuation<Value, Never>?
        var value: Value?
        var done = false
    }

    private let state = Mutex(State())

    package init() {}

    /// Delivers `value` unless one was delivered already.
    package func resume(_ value: Value) {
        let continuation: UnsafeContinuation<Value, Never>? = state.withLock { s in
            guard !s.done else { return nil }
            s.done = true
            if let c = s.continuation {
                s.continuation = nil
                return c
            }
            s.value = value
            return nil
        }
        continuation?.resume(returning: value)
    }

    /// Waits for the value (returns at once when it is already there).
    package func wait() async -> Value {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Value, Never>) in
            let ready: Value? = state.withLock { s in
                if let v = s.value {
                    s.value = nil
                    return v
                }
                s.continuation = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
