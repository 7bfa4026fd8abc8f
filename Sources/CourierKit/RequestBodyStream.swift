/// A request body produced as it is sent (a file being read, a recording being encoded), sent with chunked
/// transfer coding, or with `Content-Length` when its ``length`` is known.
///
/// The loader calls ``makeStream`` once per attempt, so a streamed request can be retried (and follow a 307
/// or 308 redirect the loader handles) like any other: each attempt sends a fresh stream from the start. A
/// stream that throws fails the attempt (the server sees a cut-short chunked body, never a complete-looking
/// partial one).
public struct RequestBodyStream: Sendable {
    /// Makes the body's bytes for one attempt, in chunks of any size.
    public let makeStream: @Sendable () -> AsyncThrowingStream<[UInt8], any Error>
    /// The number of bytes every stream makes, when known: the body is then sent with `Content-Length`, and an
    /// attempt whose stream makes fewer or more bytes fails (the server never sees a body that looks complete).
    public let length: Int?

    /// A body made by `makeStream`, called once per attempt (a retried request sends the body again from its start);
    /// `length`, when known, is sent as `Content-Length` instead of chunked coding.
    public init(length: Int? = nil, _ makeStream: @escaping @Sendable () -> AsyncThrowingStream<[UInt8], any Error>) {
        self.makeStream = makeStream
        self.length = length
    }
}
