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

    @Test func whitespaceIsSpaceAndTabOnly() {
        #expect(" \t a b \t ".trimmingHTTPWhitespace == "a b")
        #expect("\t\t".trimmingHTTPWhitespace.isEmpty)
        #expect("x\n".trimmingHTTPWhitespace == "x\n")
        #expect(Substring(" 5s ").trimmingHTTPWhitespace == "5s")
    }
}
