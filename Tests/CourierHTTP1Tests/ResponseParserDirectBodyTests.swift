import CourierCore
import CourierHTTP1
import Testing

/// A caller may receive the rest of a `Content-Length` body into its own buffer (no copy through the parser)
/// while `directBodyBytesRemaining` says so; the parser still frames the message and reports truncation.
@Suite struct ResponseParserDirectBodyTests {
    /// A parser that has returned the head and the body bytes that came with it.
    private func parserAfterHead(_ text: String, method: HTTPMethod = .get) throws -> (ResponseParser, [ResponseEvent]) {
        var parser = ResponseParser(requestMethod: method)
        parser.feed(Array(text.utf8))
        var events: [ResponseEvent] = []
        while let event = try parser.next() { events.append(event) }
        return (parser, events)
    }

    @Test func theRestOfAContentLengthBodyCanBeReceivedDirectly() throws {
        var (parser, events) = try parserAfterHead("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nab")
        #expect(events.count == 2)
        #expect(events.last == .body(Array("ab".utf8)[...]))
        #expect(parser.directBodyBytesRemaining == 8)
        parser.bodyReceivedDirectly(5)
        #expect(parser.directBodyBytesRemaining == 3)
        #expect(try parser.next() == nil)
        parser.bodyReceivedDirectly(3)
        #expect(parser.directBodyBytesRemaining == nil)
        #expect(try parser.next() == .end(keepAlive: true))
        #expect(parser.isIdle)
        // The connection stays usable: the next response parses as usual.
        parser.expectResponse(to: .get)
        parser.feed(Array("HTTP/1.1 204 No Content\r\n\r\n".utf8))
        #expect(try parser.next().map { if case .head(let h) = $0 { h.status } else { 0 } } == 204)
        #expect(try parser.next() == .end(keepAlive: true))
    }

    @Test func notOfferedWhereTheParserMustSeeTheBytes() throws {
        // Still reading the head.
        let (inHead, _) = try parserAfterHead("HTTP/1.1 200 OK\r\nContent-Le")
        #expect(inHead.directBodyBytesRemaining == nil)
        // Chunked and close-delimited bodies carry framing (or an end) only the parser can find.
        let (chunked, _) = try parserAfterHead("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        #expect(chunked.directBodyBytesRemaining == nil)
        let (closeDelimited, _) = try parserAfterHead("HTTP/1.1 200 OK\r\n\r\n")
        #expect(closeDelimited.directBodyBytesRemaining == nil)
        // No body at all.
        let (head, _) = try parserAfterHead("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", method: .head)
        #expect(head.directBodyBytesRemaining == nil)
        // Bytes already buffered must be taken through next() first.
        var buffered = ResponseParser()
        buffered.feed(Array("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n".utf8))
        _ = try buffered.next()
        buffered.feed(Array("abc".utf8))
        #expect(buffered.directBodyBytesRemaining == nil)
        #expect(try buffered.next() == .body(Array("abc".utf8)[...]))
        #expect(buffered.directBodyBytesRemaining == 7)
    }

    @Test func aCloseBeforeTheEndIsATruncatedBody() throws {
        var (parser, _) = try parserAfterHead("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n")
        parser.bodyReceivedDirectly(4)
        parser.eof()
        #expect(parser.directBodyBytesRemaining == nil)
        #expect(throws: ResponseParseError(.truncatedBody(missing: 6), offset: 43)) { try parser.next() }
    }
}
