import CourierCore
import Testing

@Suite struct HTTPTokenListTests {
    @Test func tokensSpanFieldLinesTrimOWSAndDropEmptyElements() {
        var headers = HTTPHeaders()
        headers.add(name: "Connection", value: " keep-alive ,\tClose,, ")
        headers.add(name: "connection", value: "Upgrade")
        headers.add(name: "Content-Encoding", value: "gzip")
        #expect(headers.tokens(for: "CONNECTION") == ["keep-alive", "close", "upgrade"])
        #expect(headers.tokens(for: "content-encoding") == ["gzip"])
        #expect(headers.tokens(for: "te").isEmpty)
    }

    @Test func aCommaBeforeACombiningMarkStillEndsAnElement() {
        // Swift's split on Characters sees ",\u{301}" as one character and would not split there: the list would
        // read as one token, and a `Connection: keep-alive,\u{301}close` as a connection to keep.
        var headers = HTTPHeaders()
        headers.add(name: "Content-Encoding", value: "gzip,\u{301}br")
        #expect(headers.tokens(for: "content-encoding") == ["gzip", "\u{301}br"])
        headers.add(name: "Connection", value: "close,\u{301}x")
        #expect(headers.tokens(for: "connection").first == "close")
    }

    @Test func whitespaceIsSpaceAndTabOnly() {
        #expect(" \t a b \t ".trimmingHTTPWhitespace == "a b")
        #expect("\t\t".trimmingHTTPWhitespace.isEmpty)
        #expect("x\n".trimmingHTTPWhitespace == "x\n")
        #expect(Substring(" 5s ").trimmingHTTPWhitespace == "5s")
    }
}
