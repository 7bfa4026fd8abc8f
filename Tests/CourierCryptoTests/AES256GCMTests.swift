@testable import CourierCrypto
import Testing

/// AES-256-GCM: the 256-bit test cases 13-16 of McGrew and Viega's GCM specification (the vectors NIST's GCM
/// validation started from), then the record format's seal and open, and every way a record can be refused.
@Suite struct AES256GCMTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        var number: Int
        var key: String
        var nonce: String
        var plaintext: String
        var associatedData: String
        var ciphertext: String
        var tag: String
        var testDescription: String { "GCM specification test case \(number)" }
    }

    private static let key15 = "feffe9928665731c6d6a8f9467308308" + "feffe9928665731c6d6a8f9467308308"
    private static let plaintext15 = "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
        + "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255"
    private static let ciphertext15 = "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
        + "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad"

    static let vectors: [Vector] = [
        Vector(
            number: 13, key: String(repeating: "0", count: 64), nonce: String(repeating: "0", count: 24), plaintext: "",
            associatedData: "", ciphertext: "", tag: "530f8afbc74536b9a963b4f1c4cb738b"
        ),
        Vector(
            number: 14, key: String(repeating: "0", count: 64), nonce: String(repeating: "0", count: 24),
            plaintext: String(repeating: "0", count: 32), associatedData: "", ciphertext: "cea7403d4d606b6e074ec5d3baf39d18",
            tag: "d0d1c8a799996bf0265b98b5d48ab919"
        ),
        Vector(
            number: 15, key: key15, nonce: "cafebabefacedbaddecaf888", plaintext: plaintext15, associatedData: "",
            ciphertext: ciphertext15, tag: "b094dac5d93471bdec1a502270e3cc6c"
        ),
        Vector(
            number: 16, key: key15, nonce: "cafebabefacedbaddecaf888", plaintext: String(plaintext15.dropLast(8)),
            associatedData: "feedfacedeadbeeffeedfacedeadbeefabaddad2", ciphertext: String(ciphertext15.dropLast(8)),
            tag: "76fc6ece0f4e1768cddf8853bb2d551b"
        ),
    ]

    @Test(arguments: vectors) func knownAnswer(_ v: Vector) throws {
        let key = bytes(v.key), nonce = bytes(v.nonce), plaintext = bytes(v.plaintext), aad = bytes(v.associatedData)
        let (ciphertext, tag) = AES256GCM.encrypt(plaintext, key: key, nonce: nonce, associatedData: aad)
        #expect(SHA256.hex(ciphertext) == v.ciphertext)
        #expect(SHA256.hex(tag) == v.tag)
        #expect(AES256GCM.decrypt(ciphertext, tag: tag, key: key, nonce: nonce, associatedData: aad) == plaintext)
        // The published record opens through the record format too.
        let cipher = try AES256GCM(key: key)
        #expect(try cipher.open([AES256GCM.version] + nonce + ciphertext + tag, associatedData: aad) == plaintext)
    }

    @Test func sealThenOpenWithAFreshNonceEachTime() throws {
        let cipher = try AES256GCM(key: (0..<32).map { UInt8($0) })
        let plaintext = Array(#"{"access_token":"at-1","refresh_token":"rt-1"}"#.utf8)
        let aad = Array("courier:token:{abc}".utf8)
        let one = cipher.seal(plaintext, associatedData: aad)
        let two = cipher.seal(plaintext, associatedData: aad)
        #expect(one.count == plaintext.count + AES256GCM.overhead)
        #expect(one[0] == AES256GCM.version)
        #expect(one[1...12] != two[1...12])  // 96 random bits: equal only by a fault
        #expect(one != two)
        #expect(try cipher.open(one, associatedData: aad) == plaintext)
        #expect(try cipher.open(two, associatedData: aad) == plaintext)
        #expect(try cipher.open(cipher.seal([], associatedData: []), associatedData: []) == [])
        // The clear text is nowhere in the record.
        #expect(!SHA256.hex(one).contains(SHA256.hex(Array("at-1".utf8))))
    }

    /// Every single bit flipped anywhere in a record (version, nonce, ciphertext, tag) is refused, with a typed error.
    @Test func everyAlteredBitIsRefused() throws {
        let cipher = try AES256GCM(key: [UInt8](repeating: 7, count: 32))
        let aad = Array("key".utf8)
        let sealed = cipher.seal(Array("secret token".utf8), associatedData: aad)
        for index in sealed.indices {
            for bit in 0..<8 {
                var altered = sealed
                altered[index] ^= 1 << bit
                #expect(throws: AES256GCMError.self) { try cipher.open(altered, associatedData: aad) }
            }
        }
        var tag = sealed
        tag[tag.count - 1] ^= 1
        #expect { try cipher.open(tag, associatedData: aad) } throws: { ($0 as? AES256GCMError)?.kind == .authenticationFailed }
        var version = sealed
        version[0] = 2
        #expect { try cipher.open(version, associatedData: aad) } throws: { ($0 as? AES256GCMError)?.kind == .unknownVersion }
    }

    @Test func truncatedRecordsAreRefused() throws {
        let cipher = try AES256GCM(key: [UInt8](repeating: 1, count: 32))
        let sealed = cipher.seal(Array("abc".utf8), associatedData: [])
        for length in 0..<sealed.count {
            #expect { try cipher.open(Array(sealed[..<length]), associatedData: []) } throws: { error in
                let kind = (error as? AES256GCMError)?.kind
                return length < AES256GCM.overhead ? kind == .truncated : kind == .authenticationFailed
            }
        }
    }

    @Test func anotherKeyOrOtherAssociatedDataDoNotOpen() throws {
        let a = try AES256GCM(key: [UInt8](repeating: 1, count: 32))
        let b = try AES256GCM(key: [UInt8](repeating: 2, count: 32))
        let sealed = a.seal(Array("token".utf8), associatedData: Array("courier:token:{1}".utf8))
        #expect { try b.open(sealed, associatedData: Array("courier:token:{1}".utf8)) } throws: {
            ($0 as? AES256GCMError)?.kind == .authenticationFailed
        }
        #expect { try a.open(sealed, associatedData: Array("courier:token:{2}".utf8)) } throws: {
            ($0 as? AES256GCMError)?.kind == .authenticationFailed
        }
    }

    @Test(arguments: [0, 16, 31, 33, 64]) func keysAreExactly32Bytes(_ size: Int) {
        #expect { try AES256GCM(key: [UInt8](repeating: 0xAB, count: size)) } throws: { error in
            let e = error as? AES256GCMError
            return e?.kind == .invalidKey && e?.description.contains("\(size)") == true && e?.description.contains("ab") == false
        }
        let cipher = try? AES256GCM(key: [UInt8](repeating: 0xAB, count: 32))
        #expect(cipher?.description == "AES256GCM(key: redacted)")
        #expect(!String(reflecting: cipher as Any).contains("171"))
    }

    private func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.utf8).map { Int(UInt8(ascii: "0") <= $0 && $0 <= UInt8(ascii: "9") ? $0 - 48 : $0 - 87) }
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(digits[$0] * 16 + digits[$0 + 1]) }
    }
}
