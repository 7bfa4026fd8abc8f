import OpenAPIRuntime

/// The example's attachment: `size` bytes made as they are asked for, in chunks of 64 KiB, so an upload streams
/// from here to the socket without the whole body in memory. Each byte depends on its offset only, so the bytes
/// (and their SHA-256) are the same every time.
actor AttachmentSource {
    static let chunkSize = 65_536
    let size: Int
    private var offset = 0

    init(size: Int) {
        self.size = size
    }

    /// The bytes at `offset..<offset + count`.
    static func bytes(at offset: Int, count: Int) -> ArraySlice<UInt8> {
        ArraySlice((offset..<offset + count).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) })
    }

    /// The next chunk, or nil at the end.
    func next() -> ArraySlice<UInt8>? {
        guard offset < size else { return nil }
        let count = min(Self.chunkSize, size - offset)
        defer { offset += count }
        return Self.bytes(at: offset, count: count)
    }

    /// The attachment as a request body of known length, read once as it is sent.
    nonisolated func body() -> HTTPBody {
        HTTPBody(AsyncThrowingStream(unfolding: { await self.next() }), length: .known(Int64(size)))
    }
}
