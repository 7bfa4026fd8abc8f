import CourierCrypto
import Testing

@Suite struct SHA1Tests {
    /// FIPS 180-4 examples, and a Redis script's name (what `SCRIPT LOAD "return 1"` answers).
    @Test func knownVectors() {
        #expect(SHA1.hexDigest([UInt8]()) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(SHA1.hexDigest(Array("abc".utf8)) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(SHA1.hexDigest(Array("return 1".utf8)) == "e0e1f9fabfc9d4800c877a703b823ac0578ff8db")
    }

    @Test func twoBlocksAndASlice() {
        let message = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        #expect(SHA1.hash(message).count == 20)
        #expect(SHA1.hexDigest(message) == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        #expect(SHA1.hexDigest(Array("xabcx".utf8)[1..<4]) == "a9993e364706816aba3e25717850c26c9cd0d89d")
    }
}
