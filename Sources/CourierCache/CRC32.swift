import CCourierZlib

/// CRC-32 (ISO 3309, the zlib/gzip polynomial) from the system zlib, the checksum of the record format.
///
/// CRC-32 detects every burst error up to 32 bits and all but 1 in 2³² random corruptions, which is what a
/// cache needs: it guards against torn writes and bit rot, not against an adversary who can write the
/// directory (such a writer could forge any checksum).
enum CRC32 {
    /// The CRC-32 of `bytes`, continuing from `seed` (the CRC of what came before; 0 to start).
    static func checksum(_ bytes: ArraySlice<UInt8>, seed: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBufferPointer { buffer in
            var crc = uLong(seed)
            var base = buffer.baseAddress
            var remaining = buffer.count
            // zlib takes a 32-bit length; feed larger payloads in slices.
            while remaining > 0, let pointer = base {
                let length = min(remaining, Int(UInt32.max))
                crc = crc32(crc, pointer, uInt(length))
                base = pointer + length
                remaining -= length
            }
            return UInt32(truncatingIfNeeded: crc)
        }
    }

    /// The CRC-32 of a whole array.
    static func checksum(_ bytes: [UInt8], seed: UInt32 = 0) -> UInt32 {
        checksum(bytes[...], seed: seed)
    }
}
