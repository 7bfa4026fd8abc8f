import CourierKit
import Testing

/// The public digest type answers as the package's SHA-256/SHA-512/HMAC do (FIPS 180-4 and RFC 4231 vectors).
@Suite struct MessageDigestTests {
    @Test func knownDigests() {
        #expect(
            MessageDigest.hex(MessageDigest.hash(Array("abc".utf8), algorithm: .sha256))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            MessageDigest.hex(MessageDigest.hash(Array("abc".utf8), algorithm: .sha512))
                == "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
                + "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f")
    }

    @Test(arguments: MessageDigest.Algorithm.allCases)
    func incrementalEqualsOneShot(algorithm: MessageDigest.Algorithm) {
        let message = (0..<1000).map { UInt8($0 % 251) }
        var digest = MessageDigest(algorithm)
        digest.update(message[..<333])
        let copy = digest
        digest.update(message[333...])
        #expect(digest.algorithm == algorithm)
        #expect(digest.finalize() == MessageDigest.hash(message, algorithm: algorithm))
        #expect(copy.finalize() == MessageDigest.hash(message[..<333], algorithm: algorithm))
    }

    /// RFC 4231 test case 2 (key "Jefe").
    @Test func authenticationCode() {
        let message = Array("what do ya want for nothing?".utf8)
        let key = Array("Jefe".utf8)
        #expect(
            MessageDigest.hex(MessageDigest.authenticationCode(for: message, key: key, algorithm: .sha256))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(
            MessageDigest.hex(MessageDigest.authenticationCode(for: message, key: key, algorithm: .sha512))
                == "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea250554"
                + "9758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737")
    }
}
