import CourierCrypto
import Testing

@Suite struct SHA512Tests {
    private func hex(_ bytes: [UInt8]) -> String { SHA256.hex(bytes) }

    /// FIPS 180-4 examples (and the NIST one-million-'a' vector).
    @Test func knownVectors() {
        #expect(
            hex(SHA512.hash([UInt8]()))
                == "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"
        )
        #expect(
            hex(SHA512.hash(Array("abc".utf8)))
                == "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
        )
        let twoBlocks = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"
        #expect(
            hex(SHA512.hash(Array(twoBlocks.utf8)))
                == "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909"
        )
        #expect(
            hex(SHA512.hash([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)))
                == "e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973ebde0ff244877ea60a4cb0432ce577c31beb009c5c2c49aa2e4eadb217ad8cc09b"
        )
    }

    @Test func incrementalEqualsOneShot() {
        let data = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        for split in [0, 1, 111, 112, 127, 128, 129, 500, 999, 1000] {
            var h = SHA512()
            h.update(data[..<split])
            h.update(data[split...])
            #expect(h.finalize() == SHA512.hash(data), "split \(split)")
        }
    }
}
extension SHA512Tests {
    /// Digests of n bytes of 'a' at the padding boundaries, from Python's hashlib.
    @Test(arguments: [(111, "fa9121c7b32b9e01733d034cfc78cbf67f926c7ed83e82200ef86818196921760b4beff48404df811b953828274461673c68d04e297b0eb7b2b4d60fc6b566a2"), (112, "c01d080efd492776a1c43bd23dd99d0a2e626d481e16782e75d54c2503b5dc32bd05f0f1ba33e568b88fd2d970929b719ecbb152f58f130a407c8830604b70ca"), (127, "828613968b501dc00a97e08c73b118aa8876c26b8aac93df128502ab360f91bab50a51e088769a5c1eff4782ace147dce3642554199876374291f5d921629502"), (128, "b73d1929aa615934e61a871596b3f3b33359f42b8175602e89f7e06e5f658a243667807ed300314b95cacdd579f3e33abdfbe351909519a846d465c59582f321"), (239, "52c853cb8d907f3d4d6b889beb027985d7c273486d75f8baf26f80d24e90c74c6c3de3e22131582380a7d14d43f2941a31385439cd6ddc469f628015e50bf286"), (240, "4c296d90c61052a62ffb1dd196f1b7b09373b1f93e71836baebf89690546b7595684dbe9467a8e484fa0d1094272b4344a7c24f5fee8daedeb0bf549c985ab5f")])
    func boundaryVectors(_ n: Int, _ expected: String) {
        #expect(SHA256.hex(SHA512.hash([UInt8](repeating: UInt8(ascii: "a"), count: n))) == expected)
    }
}
