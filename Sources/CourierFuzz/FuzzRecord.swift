// libFuzzer target for CourierCache's record decoder (RecordCodec): bytes from disk, possibly torn or hostile.
// Built and run by Fuzz/run.sh (docs/fuzzing.md).
//
// The first input byte chooses what the harness repairs before decoding, so that mutations reach past the
// checksums (libFuzzer cannot compute a CRC-32): bit 0 recomputes the header CRC, bit 1 the payload CRC, bit 2
// sets the payload-size field to the bytes after the key. The rest is the file. Properties: decoding never
// traps; a file that decodes is exactly the bytes its record encodes to (nothing a reader accepts is lost by a
// rewrite), and its record's fields are within the format's bounds.
internal import CourierCache

/// CRC-32 (the zlib polynomial, reflected), bit by bit: slow and independent of the store's own.
private func crc32(_ bytes: ArraySlice<UInt8>, seed: UInt32 = 0) -> UInt32 {
    var crc = ~seed
    for byte in bytes {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
    }
    return ~crc
}

private func readLittleEndian(_ bytes: [UInt8], at offset: Int, count: Int) -> UInt64 {
    (0..<count).reduce(UInt64(0)) { $0 | UInt64(bytes[offset + $1]) << UInt64($1 * 8) }
}

private func writeLittleEndian(_ bytes: inout [UInt8], at offset: Int, count: Int, _ value: UInt64) {
    for index in 0..<count { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> UInt64(index * 8)) }
}

/// The file with the fields the control byte names made consistent with the rest of it (when it is long enough
/// to have them).
private func repaired(_ file: [UInt8], control: UInt8) -> [UInt8] {
    guard file.count >= 64 else { return file }
    var file = file
    let keyEnd = min(file.count, 64 + Int(readLittleEndian(file, at: 48, count: 4)))
    if control & 4 != 0 { writeLittleEndian(&file, at: 40, count: 8, UInt64(file.count - keyEnd)) }
    if control & 2 != 0 { writeLittleEndian(&file, at: 56, count: 4, UInt64(crc32(file[keyEnd...]))) }
    if control & 1 != 0 {
        writeLittleEndian(&file, at: 60, count: 4, UInt64(crc32(file[64..<keyEnd], seed: crc32(file[0..<60]))))
    }
    return file
}

/// One input through the harness: libFuzzer's `LLVMFuzzerTestOneInput`, reached through `FuzzTarget`.
func fuzzRecord(_ data: UnsafeBufferPointer<UInt8>) {
    guard let input = FuzzInput(data) else { return }
    let file = repaired(input.payload, control: input.control)
    guard case .success(let record) = RecordCodec.decode(file) else { return }
    precondition(RecordCodec.encode(record) == file, "a decoded record does not encode to the bytes it came from")
    precondition(!record.key.isEmpty && record.key.count <= 64 * 1024, "a key of \(record.key.count) bytes decoded")
    precondition(64 + record.key.count + record.payload.count == file.count, "the parts do not add up to the file")
}
