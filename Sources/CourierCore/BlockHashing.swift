/// The buffering the SHA-2 hashes share: message bytes arrive in any split, and every whole block goes to the
/// hash's compression function exactly once, in order.
protocol BlockHashing {
    /// The block size in bytes (64 for SHA-256, 128 for SHA-512).
    static var blockBytes: Int { get }
    /// Bytes of an unfinished block.
    var pending: [UInt8] { get set }
    /// Message length in bytes so far.
    var length: UInt64 { get set }
    /// Processes one whole block.
    mutating func compress(_ block: UnsafePointer<UInt8>)
}

extension BlockHashing {
    /// Adds `bytes` to the message.
    mutating func absorb(_ bytes: some Collection<UInt8>) {
        let size = Self.blockBytes
        length &+= UInt64(bytes.count)
        var input = ArraySlice(bytes)
        if !pending.isEmpty {
            let take = min(size - pending.count, input.count)
            pending += input.prefix(take)
            input = input.dropFirst(take)
            if pending.count == size {
                let block = pending
                block.withUnsafeBufferPointer { compress($0.baseAddress!) }
                pending.removeAll(keepingCapacity: true)
            }
        }
        input.withUnsafeBufferPointer { buffer in
            var offset = 0
            while buffer.count - offset >= size {
                compress(buffer.baseAddress! + offset)
                offset += size
            }
            pending += buffer[offset...]
        }
    }
}
