/// How a ``MockResponse``'s body goes out, without framing: its bytes in order, the waits between them (between
/// chunks, for throttling), chunk boundaries, and whether it is cut. Pure: made from the response alone. A
/// ``MockWirePlan`` frames it for a connection; a ``ScriptedTransport`` hands its bytes to the loader directly.
package struct MockBodyPlan: Hashable, Sendable {
    package enum Step: Hashable, Sendable {
        /// A chunk of `size` bytes starts (a chunked body only; sent before its bytes even when they are cut).
        case chunkStart(size: Int)
        /// Body bytes.
        case bytes(ArraySlice<UInt8>)
        /// The current chunk ends.
        case chunkEnd
        case wait(Duration)
    }

    /// How many slices a throttled second is sent in.
    package static let slicesPerSecond = 20

    package private(set) var steps: [Step] = []
    /// Whether the body is chunked (one chunk per non-empty element of ``MockResponse/Body/chunked(_:)``).
    package let isChunked: Bool
    /// Whether the body stops after ``MockResponse/disconnectAfterBodyBytes`` (and the connection with it).
    package private(set) var isCut = false
    /// The number of body bytes the plan sends (the cut ones not counted).
    package private(set) var bytesSent = 0

    package init(_ response: MockResponse) {
        let chunks: [[UInt8]]?
        switch response.body {
        case .whole: chunks = nil
        case .chunked(let pieces): chunks = pieces.filter { !$0.isEmpty }
        }
        isChunked = chunks != nil
        var budget = response.disconnectAfterBodyBytes
        for (index, piece) in (chunks ?? [response.bodyBytes]).enumerated() {
            if index > 0, response.delayBetweenChunks > .zero { steps.append(.wait(response.delayBetweenChunks)) }
            if isChunked { steps.append(.chunkStart(size: piece.count)) }
            var payload = piece[...]
            if let left = budget {
                isCut = payload.count > left
                payload = payload.prefix(left)
                budget = left - payload.count
            }
            add(payload, rate: response.bytesPerSecond)
            if isCut { return }
            if isChunked { steps.append(.chunkEnd) }
        }
    }

    /// Adds `payload`, in slices with waits when throttled: a wait before every slice but the body's first, as long
    /// as the slice takes at the rate.
    private mutating func add(_ payload: ArraySlice<UInt8>, rate: Int?) {
        guard let rate else {
            if !payload.isEmpty { steps.append(.bytes(payload)) }
            bytesSent += payload.count
            return
        }
        let sliceSize = max(1, rate / Self.slicesPerSecond)
        var rest = payload
        while !rest.isEmpty {
            let slice = rest.prefix(sliceSize)
            rest = rest.dropFirst(slice.count)
            if bytesSent > 0 { steps.append(.wait(.nanoseconds(Int64(slice.count) * 1_000_000_000 / Int64(rate)))) }
            steps.append(.bytes(slice))
            bytesSent += slice.count
        }
    }

    /// The sum of the plan's waits.
    package var totalWait: Duration {
        steps.reduce(.zero) { sum, step in
            if case .wait(let duration) = step { return sum + duration }
            return sum
        }
    }
}
