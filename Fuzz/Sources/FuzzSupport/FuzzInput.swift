/// One libFuzzer input as the targets read it: a control byte that chooses options (mode, limits, feed size),
/// then the payload.
public struct FuzzInput {
    /// The first byte.
    public let control: UInt8
    /// Everything after the first byte.
    public let payload: [UInt8]

    /// Nil for the empty input, which has no control byte.
    public init?(_ data: UnsafePointer<UInt8>, _ size: Int) {
        guard size > 0 else { return nil }
        control = data[0]
        payload = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    }

    /// The payload as text, invalid UTF-8 replaced.
    public var text: String { String(decoding: payload, as: UTF8.self) }

    /// The payload cut into feeds of `step` bytes (the last may be shorter), to compare with one whole feed.
    public func pieces(step: Int) -> [ArraySlice<UInt8>] {
        stride(from: 0, to: payload.count, by: max(1, step)).map { payload[$0..<min(payload.count, $0 + step)] }
    }
}
