import CourierCrypto
import Testing

@Suite struct SHA256Tests {
    @Test func knownVectors() {
        #expect(SHA256.hex(SHA256.hash([UInt8]())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(SHA256.hash(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256.hex(SHA256.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        )
        #expect(
            SHA256.hex(SHA256.hash([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        )
    }

    @Test func incrementalEqualsOneShot() {
        let data = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        for split in [0, 1, 63, 64, 65, 500, 999, 1000] {
            var h = SHA256()
            h.update(data[..<split])
            h.update(data[split...])
            #expect(h.finalize() == SHA256.hash(data), "split \(split)")
        }
    }

    /// A copy hashes on independently of the original, and finalizing leaves a hasher usable.
    @Test func copiesAreIndependentAndFinalizingDoesNotEndTheHash() {
        var a = SHA256()
        a.update(Array("abc".utf8))
        var b = a
        _ = a.finalize()
        a.update(Array("def".utf8))
        b.update(Array("xyz".utf8))
        #expect(SHA256.hex(a.finalize()) == "bef57ec7f53a6d40beb640a780a639c83bc29ac8a9816f1fc6c5c6dcd93c4721")
        #expect(SHA256.hex(b.finalize()) == "f312795e322c87461a6f3c49e09897c59ca0d5a36245d2a00f08cbc66eee976d")
    }
}
