/// A request body produced as it is sent (a file being read, a recording being encoded), sent with chunked
/// transfer coding.
///
/// The loader calls ``makeStream`` once per attempt, so a streamed request can be retried (and follow a 307
/// or 308 redirect the loader handles) like any other: each attempt sends a fresh stream from the start. A
/// stream that throws fails the attempt (the server sees a cut-short chunked body, never a complete-looking
/// partial one).
public struct RequestBodyStream: Sendable {
    /// Makes the body's bytes for one attempt, in chunks of any size.
    public let makeStream: @Sendable () -> AsyncThrowingStream<[UInt8], any Error>

    /// A body made by `makeStream`, called once per attempt (a retried request sends the body again from its start).
    public init(_ makeStream: @escaping @Sendable () -> AsyncThrowingStream<[UInt8], any Error>) {
        self.makeStream = makeStream
    }
}
