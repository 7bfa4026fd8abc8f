/// A body collected up to a limit: the one rule for how much of a response is kept, whether it is read whole by
/// the transport, gathered from a stream for a delegate, or kept beside a stream for the cache.
package struct BoundedBody: Sendable {
    /// The most bytes kept.
    package let limit: Int
    /// What has been collected so far (empty once it overflowed).
    package var bytes: [UInt8] = []
    /// Whether a chunk would have taken the body past the limit (the bytes were dropped).
    package private(set) var overflowed = false

    package init(limit: Int, expectedLength: Int? = nil) {
        self.limit = limit
        if let expectedLength, expectedLength > 0, expectedLength <= limit { bytes.reserveCapacity(expectedLength) }
    }

    /// How many more bytes fit.
    package var room: Int { overflowed ? 0 : limit - bytes.count }

    /// Adds `chunk`; returns false (dropping everything collected) when it does not fit.
    @discardableResult
    package mutating func append(_ chunk: some Collection<UInt8>) -> Bool {
        guard !overflowed else { return false }
        guard chunk.count <= limit - bytes.count else {
            overflowed = true
            bytes = []
            return false
        }
        bytes.append(contentsOf: chunk)
        return true
    }

    /// Starts again (a retried response's body).
    package mutating func reset() {
        bytes.removeAll()
        overflowed = false
    }
}
