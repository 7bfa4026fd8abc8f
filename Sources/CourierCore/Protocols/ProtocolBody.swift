internal import Synchronization

/// A body read as a stream of byte chunks, pulled by its one reader: a ``ProtocolPlugin``'s answer (read by the
/// transport as the caller consumes it: nothing is read ahead) or a request's body handed to a plugin.
///
/// Made from bytes (``bytes(_:)``), from an `AsyncThrowingStream`, or from a function that returns the next chunk
/// (nil at the end) and is called only when the reader wants one: how ``FileProtocol`` reads a file of any size in
/// chunks. Only one task may read at a time.
public final class ProtocolBody: Sendable {
    private let pull: @Sendable () async throws -> [UInt8]?
    private let stop: @Sendable () -> Void

    /// A body whose chunks `next` returns, one per call, nil at the end; `cancel` is called when the reader gives
    /// up before the end (to close a file, stop a producer).
    public init(next: @escaping @Sendable () async throws -> [UInt8]?, cancel: @escaping @Sendable () -> Void = {}) {
        self.pull = next
        self.stop = cancel
    }

    /// No body.
    public static var empty: ProtocolBody { ProtocolBody(next: { nil }) }

    /// A body of these bytes, handed over as one chunk.
    public static func bytes(_ bytes: [UInt8]) -> ProtocolBody {
        let rest = Mutex<[UInt8]?>(bytes.isEmpty ? nil : bytes)
        return ProtocolBody(next: { rest.withLock { $0.take() } })
    }

    /// A body of a stream's chunks; giving up cancels the stream's iteration.
    public static func stream(_ stream: AsyncThrowingStream<[UInt8], any Error>) -> ProtocolBody {
        let iterator = StreamIterator(stream)
        return ProtocolBody(next: { try await iterator.next() }, cancel: { iterator.cancel() })
    }

    /// The next chunk, or nil at the end. An empty chunk is skipped, not an end.
    public func next() async throws -> [UInt8]? {
        while let chunk = try await pull() {
            if !chunk.isEmpty { return chunk }
        }
        return nil
    }

    /// Every remaining chunk, joined: at most `limit` bytes (more throws ``ProtocolPluginError``).
    public func collect(upTo limit: Int) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        while let chunk = try await next() {
            guard bytes.count + chunk.count <= limit else {
                cancel()
                throw ProtocolPluginError("the body is larger than \(limit) bytes")
            }
            bytes += chunk
        }
        return bytes
    }

    /// Stops reading before the end: the source is told, once it is not needed any more.
    public func cancel() { stop() }
}

/// An `AsyncThrowingStream`'s iterator behind a reference, for ``ProtocolBody``'s one reader.
///
/// `@unchecked Sendable`: the iterator is not `Sendable`, and ``ProtocolBody`` allows one reader at a time, so it is
/// never used by two tasks at once; cancelling only sets an atomic flag that later reads see (a read in progress
/// ends when the transport cancels the task it runs on).
private final class StreamIterator: @unchecked Sendable {
    private var iterator: AsyncThrowingStream<[UInt8], any Error>.AsyncIterator
    private let cancelled = Atomic(false)

    init(_ stream: AsyncThrowingStream<[UInt8], any Error>) {
        iterator = stream.makeAsyncIterator()
    }

    func next() async throws -> [UInt8]? {
        guard !cancelled.load(ordering: .acquiring) else { return nil }
        return try await iterator.next()
    }

    func cancel() { cancelled.store(true, ordering: .releasing) }
}
