/// Byte constants and scans the response parser and its field-section reader share. They work on an
/// `UnsafeBufferPointer` over the fed bytes and, where a line or value can be long, look at eight bytes at a time.
/// (The module is built whole in release, so these inline as if they were private to each caller.)

let cr = UInt8(ascii: "\r")
let lf = UInt8(ascii: "\n")
let sp = UInt8(ascii: " ")
let tab = UInt8(ascii: "\t")
let colon = UInt8(ascii: ":")
let semicolon = UInt8(ascii: ";")
let zero = UInt8(ascii: "0")

@inline(__always)
func isDigit(_ b: UInt8) -> Bool { b &- zero < 10 }

/// Bytes not allowed in a field value or reason phrase: controls other than HTAB, and DEL.
@inline(__always)
func isInvalidFieldByte(_ b: UInt8) -> Bool { (b < 0x20 && b != tab) || b == 0x7F }

/// The index of the first byte in `p[start..<end]` that ``isInvalidFieldByte(_:)``, checking eight bytes at a
/// time and falling back to bytes only for a word holding a control byte or DEL (HTAB is allowed).
@inline(__always)
func firstInvalidFieldByte(_ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Int? {
    guard let base = p.baseAddress else { return nil }
    let raw = UnsafeRawPointer(base)
    var i = start
    while i + 8 <= end {
        let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
        // A byte below 0x20 (only ASCII bytes can set the bit), or a byte equal to 0x7F.
        let control = (word &- 0x2020_2020_2020_2020) & ~word & 0x8080_8080_8080_8080
        let del = word ^ 0x7F7F_7F7F_7F7F_7F7F
        let delFound = (del &- 0x0101_0101_0101_0101) & ~del & 0x8080_8080_8080_8080
        if control | delFound != 0 {
            for k in i..<(i + 8) where isInvalidFieldByte(base[k]) { return k }
        }
        i += 8
    }
    while i < end {
        if isInvalidFieldByte(base[i]) { return i }
        i += 1
    }
    return nil
}

/// The index of the first LF at or after `start`, scanning eight bytes at a time.
@inline(__always)
func indexOfLF(_ p: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
    guard let base = p.baseAddress else { return nil }
    let count = p.count
    var i = start
    let raw = UnsafeRawPointer(base)
    while i + 8 <= count {
        let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) ^ 0x0A0A_0A0A_0A0A_0A0A
        let found = (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080
        if found != 0 { return i + found.trailingZeroBitCount >> 3 }
        i += 8
    }
    while i < count {
        if base[i] == lf { return i }
        i += 1
    }
    return nil
}

@inline(__always)
func slice(_ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> UnsafeBufferPointer<UInt8> {
    UnsafeBufferPointer(rebasing: p[start..<end])
}

@inline(__always)
func string(_ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> String {
    String(decoding: UnsafeBufferPointer(rebasing: p[start..<end]), as: UTF8.self)
}

/// Whether `p[start...]` equals `lowercase` ignoring ASCII case (`lowercase` is lower-case ASCII).
func equalsLowercase(_ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ lowercase: StaticString) -> Bool {
    let count = lowercase.utf8CodeUnitCount
    let expected = lowercase.utf8Start
    for k in 0..<count where p[start + k] | 0x20 != expected[k] {
        return false
    }
    return true
}
