internal import CourierCore
internal import CourierTransport
internal import Synchronization
internal import CourierHTTP1

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

    // MARK: - Delivering a response

    /// Delivers a final attempt's head and body at the consumer's pace. Returns the exchange's figures and, when
    /// `keeping` is given, the body if it is no larger than that (for the cache); or the failure (`cancelled`
    /// when the consumer is gone). `continuing`: the body continues one the consumer has (a resumed download),
    /// announced by this event instead of the response's head. `delivered` counts the body's bytes handed over.
    nonisolated(nonsending) func deliver(
        _ response: StreamingResponse, attempt: Int, keeping limit: Int?, continuing: LoadEvent? = nil, delivered: inout Int64
    ) async -> Result<(RequestMetrics, [UInt8]?), CourierError> {
        let url = response.url.description
        var kept = limit.map { BoundedBody(limit: $0) }
        let first = continuing ?? .response(ResponseHead(
            status: response.status, reason: response.head.reason, headers: response.headers, url: response.url,
            attempt: attempt
        ))
        guard await send(first) else {
            response.body.cancel()
            return .failure(CourierError(.cancelled, "the request was cancelled", url: url))
        }
        do {
            while let chunk = try await response.body.nextChunk() {
                kept?.append(chunk)
                delivered += Int64(chunk.count)
                guard await send(.chunk(Array(chunk))) else {
                    response.body.cancel()
                    var error = CourierError(.cancelled, "the request was cancelled", url: url)
                    error.bytesSent = response.body.metrics.bytesSent
                    error.bytesReceived = response.body.metrics.bytesReceived
                    return .failure(error)
                }
            }
        } catch {
            return .failure(error)
        }
        return .success((response.body.metrics, kept.flatMap { $0.overflowed ? nil : $0.bytes }))
    }

    /// Delivers a stored response: its head, then its body in chunks of at most 64 KiB.
    func deliverStored(_ head: ResponseHead, body: [UInt8]) async throws(CourierError) {
        let cancelled = CourierError(.cancelled, "the request was cancelled", url: head.url.description)
        guard await send(.response(head)) else { throw cancelled }
        var offset = 0
        while offset < body.count {
            let end = min(body.count, offset + 65_536)
            guard await send(.chunk(Array(body[offset..<end]))) else { throw cancelled }
            offset = end
        }
    }
}
