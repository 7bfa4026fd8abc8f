internal import OpenAPIRuntime

/// One attempt's bytes of a request's `HTTPBody`, chunk by chunk, for a `RequestBodyStream`.
///
/// `@unchecked Sendable`: its one user is `AsyncThrowingStream(unfolding:)`, which calls ``next()`` once at a time,
/// each call after the previous one returned, so the iterator is never touched by two threads at once (CourierKit's
/// `MultipartProducer` is confined the same way).
final class HTTPBodyReader: @unchecked Sendable {
    private var iterator: HTTPBody.AsyncIterator

    /// Starts reading `body`; a body that can be read once throws from ``next()`` when it is read again.
    init(_ body: HTTPBody) {
        iterator = body.makeAsyncIterator()
    }

    /// The next chunk, or nil at the end of the body.
    func next() async throws -> [UInt8]? {
        try await iterator.next().map(Array.init)
    }
}
