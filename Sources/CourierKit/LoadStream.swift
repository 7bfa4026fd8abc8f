public import CourierCore

/// A request loaded as a stream of ``LoadEvent``s: ``DataLoader/stream(_:)`` returns it at once and the request
/// runs while it is iterated, with backpressure (the body is read from the socket only as fast as the loop
/// consumes it).
///
/// ```swift
/// for try await event in loader.stream(Request(url: "https://media.example.com/episode.mp3")) {
///     switch event {
///     case .response(let head): print("status \(head.status), attempt \(head.attempt)")
///     case .chunk(let bytes): try file.write(bytes)
///     case .retrying(let attempt, let reason): try file.truncate(); print("attempt \(attempt) after \(reason)")
///     case .resuming(let attempt, let offset, _): print("attempt \(attempt) continues at byte \(offset)")
///     case .finished(let response): print("\(response.bytesReceived) bytes on the wire")
///     }
/// }
/// ```
///
/// Failures are thrown as `CourierError`. Cancelling the iterating task, the ``handle``, or the loader
/// cancels the request and ends the loop at once with a `cancelled` error; so does dropping the stream
/// before its end.
public final class LoadStream: AsyncSequence, Sendable {
    /// The events of the request.
    public typealias Element = LoadEvent
    /// What a failed request throws.
    public typealias Failure = CourierError

    /// Cancels the request.
    public let handle: LoadHandle
    private let channel: LoadChannel

    init(handle: LoadHandle, channel: LoadChannel) {
        self.handle = handle
        self.channel = channel
    }

    deinit {
        handle.cancel()
    }

    /// The next event, or nil after ``LoadEvent/finished(_:)``.
    public func next() async throws(CourierError) -> LoadEvent? {
        let channel = self.channel
        let handle = self.handle
        return try await withTaskCancellationHandler { () async -> Result<LoadEvent?, CourierError> in
            do throws(CourierError) {
                return .success(try await channel.next())
            } catch {
                return .failure(error)
            }
        } onCancel: {
            handle.cancel()
        }.get()
    }

    /// Iterates the stream's events; made by ``LoadStream/makeAsyncIterator()``.
    public struct AsyncIterator: AsyncIteratorProtocol {
        /// The events of the request.
        public typealias Element = LoadEvent
        /// What a failed request throws.
        public typealias Failure = CourierError
        let stream: LoadStream

        /// The next event, nil after the last, or the request's failure (see ``LoadStream/next()``).
        public mutating func next() async throws(CourierError) -> LoadEvent? {
            try await stream.next()
        }

        /// As ``next()``; the isolation is not needed, the stream being `Sendable`.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(CourierError) -> LoadEvent? {
            try await stream.next()
        }
    }

    /// An iterator over the request's events (one consumer at a time).
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(stream: self) }
}
