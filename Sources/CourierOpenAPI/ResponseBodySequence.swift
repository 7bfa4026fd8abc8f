internal import CourierCore
internal import CourierKit

/// A response body as the runtime's `HTTPBody` reads it: the chunks of a ``LoadStream`` after its head, read from
/// the connection only as they are asked for (the stream's backpressure), until the load finishes.
///
/// A body that breaks off after the client has its head, and that the route retries (`connection-lost`), continues
/// where it broke off when the loader can resume it (`Range` and `If-Range`, answered with a `206`:
/// ``LoadEvent/resuming(attempt:from:reason:)``). One that would start again cannot, for a client that already has
/// part of it: the body ends with a `CourierError` of kind `protocol` that gives the reason, and the new attempt is
/// cancelled. Dropping the body before its end cancels the load too.
struct ResponseBodySequence: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>

    let stream: LoadStream

    struct AsyncIterator: AsyncIteratorProtocol {
        let stream: LoadStream
        var done = false

        mutating func next() async throws -> ArraySlice<UInt8>? {
            while !done {
                switch try await stream.next() {
                case .chunk(let bytes):
                    if !bytes.isEmpty { return bytes[...] }
                case .resuming:
                    // The rest of the same body follows (a 206 from where it broke off): nothing to drop.
                    continue
                case .retrying(_, let reason):
                    done = true
                    stream.handle.cancel()
                    throw CourierError(
                        .protocol,
                        "the response body broke off (\(reason)) after the client had its head; the route retried the request, but a body cannot start again",
                        url: nil
                    )
                case .response, .finished, nil:
                    done = true
                }
            }
            return nil
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(stream: stream) }
}
