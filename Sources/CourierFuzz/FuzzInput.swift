/// One libFuzzer input as the targets read it: a control byte that chooses options (mode, limits, feed size),
/// then the payload.
struct FuzzInput {
    /// The first byte.
    let control: UInt8
    /// Everything after the first byte.
    let payload: [UInt8]

    /// Nil for the empty input, which has no control byte.
    init?(_ data: UnsafeBufferPointer<UInt8>) {
        guard let first = data.first else { return nil }
        control = first
        payload = Array(data.dropFirst())
    }

    /// The payload as text, invalid UTF-8 replaced.
    var text: String { String(decoding: payload, as: UTF8.self) }

    /// The payload cut into feeds of `step` bytes (the last may be shorter), to compare with one whole feed.
    func pieces(step: Int) -> [ArraySlice<UInt8>] {
        stride(from: 0, to: payload.count, by: max(1, step)).map { payload[$0..<min(payload.count, $0 + step)] }
    }
}
