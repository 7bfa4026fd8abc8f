import CourierCore
import Synchronization

/// Carries a streamed request's events from its execution to the one consumer, with backpressure: the
/// execution waits while two events are unread, so a body is read from the socket only as fast as it is
/// consumed.
///
/// The outcome (``finish(_:)``) is delivered after the unread events, except a cancellation, which drops them
/// and reaches the consumer at once. Only the first outcome counts.
final class LoadChannel: Sendable {
    private struct State: ~Copyable {
        var queue: [LoadEvent] = []
        var outcome: Result<Response, CourierError>?
        var outcomeDelivered = false
        var consumer: CheckedContinuation<Void, Never>?
        var producer: CheckedContinuation<Void, Never>?
    }

    /// Unread events the producer may run ahead by.
    private static let capacity = 2
    private let state = Mutex(State())

    /// Queues `event`; waits while the consumer is `capacity` events behind. Returns false (dropping the
    /// event) once the request has an outcome: the execution should stop.
    func send(_ event: LoadEvent) async -> Bool {
        let (accepted, consumer) = state.withLock { s -> (Bool, CheckedContinuation<Void, Never>?) in
            guard s.outcome == nil else { return (false, nil) }
            s.queue.append(event)
            defer { s.consumer = nil }
            return (true, s.consumer)
        }
        consumer?.resume()
        guard accepted else { return false }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let wait = state.withLock { s -> Bool in
                guard s.outcome == nil, s.queue.count >= LoadChannel.capacity else { return false }
                s.producer = continuation
                return true
            }
            if !wait { continuation.resume() }
        }
        return state.withLock { $0.outcome == nil }
    }

    /// Sets the request's outcome (the first call wins). A cancellation drops the unread events.
    func finish(_ outcome: Result<Response, CourierError>) {
        let (consumer, producer) = state.withLock { s -> (CheckedContinuation<Void, Never>?, CheckedContinuation<Void, Never>?) in
            guard s.outcome == nil else { return (nil, nil) }
            s.outcome = outcome
            if case .failure(let error) = outcome, error.kind == .cancelled { s.queue.removeAll() }
            defer {
                s.consumer = nil
                s.producer = nil
            }
            return (s.consumer, s.producer)
        }
        consumer?.resume()
        producer?.resume()
    }

    /// The next event, `.finished` with the response, nil after that, or the failure (once).
    func next() async throws(CourierError) -> LoadEvent? {
        while true {
            enum Step {
                case event(LoadEvent, wake: CheckedContinuation<Void, Never>?)
                case done(Result<Response, CourierError>?)
                case wait
            }
            let step = state.withLock { s -> Step in
                if !s.queue.isEmpty {
                    let event = s.queue.removeFirst()
                    defer { s.producer = nil }
                    return .event(event, wake: s.producer)
                }
                if let outcome = s.outcome {
                    if s.outcomeDelivered { return .done(nil) }
                    s.outcomeDelivered = true
                    return .done(outcome)
                }
                return .wait
            }
            switch step {
            case .event(let event, let wake):
                wake?.resume()
                return event
            case .done(nil):
                return nil
            case .done(.success(let response)?):
                return .finished(response)
            case .done(.failure(let error)?):
                throw error
            case .wait:
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let ready = state.withLock { s -> Bool in
                        if !s.queue.isEmpty || s.outcome != nil { return true }
                        s.consumer = continuation
                        return false
                    }
                    if ready { continuation.resume() }
                }
            }
        }
    }
}
