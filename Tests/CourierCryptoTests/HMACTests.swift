import CourierCrypto
import Testing

/// RFC 4231 test cases 1-7 for HMAC-SHA256 and HMAC-SHA512.
@Suite struct HMACTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        var number: Int
        var key: [UInt8]
        var data: [UInt8]
        var sha256: String
        var sha512: String
        /// Test case 5 compares only the first 128 bits.
        var truncatedTo: Int? = nil
        var testDescription: String { "RFC 4231 test case \(number)" }
    }

    static let vectors: [Vector] = [
        Vector(
            number: 1, key: [UInt8](repeating: 0x0b, count: 20), data: Array("Hi There".utf8),
            sha256: "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
            sha512: "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854"
        ),
        Vector(
            number: 2, key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8),
            sha256: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
            sha512: "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"
        ),
        Vector(
            number: 3, key: [UInt8](repeating: 0xaa, count: 20), data: [UInt8](repeating: 0xdd, count: 50),
            sha256: "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe",
            sha512: "fa73b0089d56a284efb0f0756c890be9b1b5dbdd8ee81a3655f83e33b2279d39bf3e848279a722c806b485a47e67c807b946a337bee8942674278859e13292fb"
        ),
        Vector(
            number: 4, key: Array(1...25), data: [UInt8](repeating: 0xcd, count: 50),
            sha256: "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
            sha512: "b0ba465637458c6990e5a8c5f61d4af7e576d97ff94b872de76f8050361ee3dba91ca5c11aa25eb4d679275cc5788063a5f19741120c4f2de2adebeb10a298dd"
        ),
        Vector(
            number: 5, key: [UInt8](repeating: 0x0c, count: 20), data: Array("Test With Truncation".utf8),
            sha256: "a3b6167473100ee06e0c796c2955552b",
            sha512: "415fad6271580a531d4179bc891d87a6",
            truncatedTo: 16
        ),
        Vector(
            number: 6, key: [UInt8](repeating: 0xaa, count: 131),
            data: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
            sha256: "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
            sha512: "80b24263c7c1a3ebb71493c1dd7be8b49b46d1f41b4aeec1121b013783f8f3526b56d037e05f2598bd0fd2215d6a1e5295e64f73f63f0aec8b915a985d786598"
        ),
        Vector(
            number: 7, key: [UInt8](repeating: 0xaa, count: 131),
            data: Array(
                "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm."
                    .utf8),
            sha256: "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2",
            sha512: "e37b6a775dc87dbaa4dfa9f96e5e3ffddebd71f8867289865df5a32d20cdc944b6022cac3c4982b10d5eeb55c3e4de15134676fb6de0446065c97440fa8c6a58"
        ),
    ]

    @Test(arguments: vectors) func rfc4231(_ v: Vector) {
        let mac256 = HMAC.authenticationCode(for: v.data, key: v.key, algorithm: .sha256)
        let mac512 = HMAC.authenticationCode(for: v.data, key: v.key, algorithm: .sha512)
        #expect(mac256.count == 32)
        #expect(mac512.count == 64)
        let n = v.truncatedTo
        #expect(SHA256.hex(n.map { Array(mac256.prefix($0)) } ?? mac256) == v.sha256)
        #expect(SHA256.hex(n.map { Array(mac512.prefix($0)) } ?? mac512) == v.sha512)
    }

    /// A key exactly one block long is used as is; one byte more is hashed first, so the MACs differ.
    @Test func keyAtBlockSizeBoundary() {
        for algorithm in HMAC.Algorithm.allCases {
            let exact = [UInt8](repeating: 7, count: algorithm.blockSize)
            let longer = exact + [7]
            let message = Array("m".utf8)
            #expect(
                HMAC.authenticationCode(for: message, key: exact, algorithm: algorithm)
                    != HMAC.authenticationCode(for: message, key: longer, algorithm: algorithm)
            )
            // A long key and its hash give the same MAC (RFC 2104 §3).
            #expect(
                HMAC.authenticationCode(for: message, key: longer, algorithm: algorithm)
                    == HMAC.authenticationCode(for: message, key: algorithm.hash(longer), algorithm: algorithm)
            )
        }
    }

    /// Edge cases outside RFC 4231, checked against Python's hmac module.
    @Test func anEmptyKeyAndAnEmptyMessage() {
        #expect(
            SHA256.hex(HMAC.authenticationCode(for: Array("abc".utf8), key: [UInt8](), algorithm: .sha256))
                == "fd7adb152c05ef80dccf50a1fa4c05d5a3ec6da95575fc312ae7c5d091836351"
        )
        #expect(
            SHA256.hex(HMAC.authenticationCode(for: [UInt8](), key: Array("k".utf8), algorithm: .sha512))
                == "893ccbf5d0b335fcda6f625e4a59055a364d75a9251589428750782c116830a1af455efe1094c1901d0e8fd5beb6df64c6d5fe1c6f09be6ef47fb3987260cdd8"
        )
    }
}
