import CourierCore
import Testing

@Suite struct HTTPTokenTests {
    /// RFC 9110 §5.6.2's `tchar`, written out as the RFC lists it.
    static let tchar = Set("!#$%&'*+-.^_`|~".utf8)
        .union(UInt8(ascii: "0")...UInt8(ascii: "9"))
        .union(UInt8(ascii: "A")...UInt8(ascii: "Z"))
        .union(UInt8(ascii: "a")...UInt8(ascii: "z"))

    @Test func everyByteIsCheckedAgainstTheRFCsList() {
        #expect(Self.tchar.count == 77)
        for byte in UInt8.min...UInt8.max {
            #expect(HTTPToken.isTokenCharacter(byte) == Self.tchar.contains(byte), "byte \(byte)")
            #expect(HTTPMethod.isTokenCharacter(byte) == Self.tchar.contains(byte), "byte \(byte)")
        }
    }

    @Test func aTokenIsOneOrMoreTchar() {
        #expect(HTTPToken.isToken("Content-Length"))
        #expect(HTTPToken.isToken("!#$%&'*+-.^_`|~09AZaz"))
        #expect(!HTTPToken.isToken(""))
        #expect(!HTTPToken.isToken("a b"))
        #expect(!HTTPToken.isToken("a:"))
        #expect(!HTTPToken.isToken("\"a\""))
        #expect(!HTTPToken.isToken("caf\u{E9}"))
        #expect(!HTTPToken.isToken([UInt8(ascii: "a"), 0x80]))
        #expect(HTTPToken.isToken(Substring("x-a")))
    }

    @Test func methodsAndFieldNamesUseTheRule() {
        #expect(HTTPMethod("M-SEARCH").isValidToken)
        #expect(!HTTPMethod("GET /").isValidToken)
        #expect(!HTTPMethod("").isValidToken)
        #expect(HTTPHeaders.isValidName("X-Trace_Id"))
        #expect(!HTTPHeaders.isValidName("X Trace"))
        #expect(!HTTPHeaders.isValidName("(x)"))
        #expect(!HTTPHeaders.isValidName(""))
    }
}
