import CourierCore
import Testing

@Suite struct HTTPHeadersTests {
    @Test func lookupIsCaseInsensitiveAndOrdered() {
        var h: HTTPHeaders = ["Content-Type": "text/plain", "Set-Cookie": "a=1"]
        h.add(name: "set-cookie", value: "b=2")
        #expect(h["content-type"] == "text/plain")
        #expect(h["CONTENT-TYPE"] == "text/plain")
        #expect(h["Set-Cookie"] == "a=1")
        #expect(h.values(for: "SET-COOKIE") == ["a=1", "b=2"])
        #expect(h["missing"] == nil)
        #expect(h.values(for: "missing") == [])
        #expect(h.contains("set-COOKIE"))
        #expect(h.count == 3)
        #expect(h.map(\.name) == ["Content-Type", "Set-Cookie", "set-cookie"])
    }

    @Test func replaceKeepsThePositionOfTheFirst() {
        var h = HTTPHeaders([("A", "1"), ("B", "2"), ("a", "3"), ("C", "4")])
        h.replaceOrAdd(name: "A", value: "x")
        #expect(h.fields == [.init(name: "A", value: "x"), .init(name: "B", value: "2"), .init(name: "C", value: "4")])
        h.replaceOrAdd(name: "D", value: "5")
        #expect(h.fields.last == .init(name: "D", value: "5"))
        h.remove(name: "b")
        #expect(!h.contains("B"))
        #expect(h.count == 3)
    }

    @Test func namesDifferingOnlyOutsideLettersAreNotEqual() {
        // '@' | 0x20 == '`': case folding must only apply to letters.
        #expect(!HTTPHeaders.namesEqual("a@", "a`"))
        #expect(!HTTPHeaders.namesEqual("[", "{"))
        #expect(HTTPHeaders.namesEqual("X-Request-ID", "x-request-id"))
        #expect(!HTTPHeaders.namesEqual("X-A", "X-AB"))
    }

    @Test func validation() {
        #expect(HTTPHeaders.isValidName("X-Custom_Header.1~"))
        #expect(!HTTPHeaders.isValidName(""))
        #expect(!HTTPHeaders.isValidName("Bad Name"))
        #expect(!HTTPHeaders.isValidName("Bad:Name"))
        #expect(!HTTPHeaders.isValidName("Ünicode"))
        #expect(HTTPHeaders.isValidValue("any value, even \"quoted\" and\ttabbed"))
        #expect(HTTPHeaders.isValidValue(""))
        #expect(!HTTPHeaders.isValidValue("a\r\nInjected: 1"))
        #expect(!HTTPHeaders.isValidValue("a\nb"))
        #expect(!HTTPHeaders.isValidValue("a\u{0}b"))
        let h: HTTPHeaders = ["Good": "1", "Bad": "x\r\ny"]
        #expect(h.firstInvalidField?.name == "Bad")
        #expect(h.firstInvalidField?.value == "x\r\ny")
        // Checked on the stored bytes: every rule of isValidName and isValidValue, and the first offender wins.
        #expect(HTTPHeaders([("A", "1"), ("traceparent", "00-0af7651916cd43dd-01")]).firstInvalidField == nil)
        #expect(HTTPHeaders([("A", "1"), ("", "empty name")]).firstInvalidField?.value == "empty name")
        #expect(HTTPHeaders([("Bad Name", "1"), ("Bad:Name", "2")]).firstInvalidField?.name == "Bad Name")
        #expect(HTTPHeaders([("Ünicode", "1")]).firstInvalidField?.name == "Ünicode")
        #expect(HTTPHeaders([("A", "a\u{0}b")]).firstInvalidField?.name == "A")
        #expect(HTTPHeaders([("A", "a\nb")]).firstInvalidField?.name == "A")
        #expect(HTTPHeaders().firstInvalidField == nil)
    }

    @Test func equalityIsOrdered() {
        let a: HTTPHeaders = ["A": "1", "B": "2"]
        let b: HTTPHeaders = ["B": "2", "A": "1"]
        #expect(a != b)
        #expect(a == HTTPHeaders([("A", "1"), ("B", "2")]))
        #expect(Set([a, b]).count == 2)
    }
}
