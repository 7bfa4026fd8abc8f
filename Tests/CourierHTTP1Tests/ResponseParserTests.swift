import CourierCore
import CourierHTTP1
import Testing

@Suite struct ResponseParserFramingTests {
    @Test func contentLengthBody() throws {
        let events = parseWhole("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: b\r\n\r\nhello")
        let h = try #require(head(events))
        #expect(h.version == .http1_1)
        #expect(h.status == 200)
        #expect(h.reason == "OK")
        #expect(h.headers["content-length"] == "5")
        #expect(h.headers["x-a"] == "b")
        #expect(events.dropFirst() == [.body([UInt8]("hello")), .end(keepAlive: true)])
    }

    @Test func fieldValuesAreTrimmedAndOrderKept() throws {
        let events = parseWhole("HTTP/1.1 200 OK\r\nA:  1 \t\r\nB:2\r\nA: 3\r\nEmpty:\r\nContent-Length: 0\r\n\r\n")
        let h = try #require(head(events))
        #expect(h.headers.fields.map(\.name) == ["A", "B", "A", "Empty", "Content-Length"])
        #expect(h.headers.values(for: "a") == ["1", "3"])
        #expect(h.headers["empty"] == "")
        #expect(events.last == .end(keepAlive: true))
    }

    @Test func zeroContentLengthEndsImmediately() {
        let events = parseWhole("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        #expect(events.count == 2)
        #expect(events.last == .end(keepAlive: true))
    }

    @Test func emptyReasonPhrase() throws {
        let a = try #require(head(parseWhole("HTTP/1.1 200 \r\nContent-Length: 0\r\n\r\n")))
        #expect(a.reason == "")
        let b = try #require(head(parseWhole("HTTP/1.1 404\r\nContent-Length: 0\r\n\r\n")))
        #expect(b.status == 404)
        #expect(b.reason == "")
        let c = try #require(head(parseWhole("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n")))
        #expect(c.reason == "Internal Server Error")
    }

    @Test func chunkedBodyWithExtensionsAndTrailers() {
        let text =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "5;name=value;other\r\nhello\r\n" + "6 ; quoted=\"a b\"\r\n world\r\n" + "000\r\n"
            + "Checksum: abc\r\nX-Other: 1\r\n\r\n"
        let events = parseWhole(text)
        #expect(
            events.dropFirst() == [
                .body([UInt8]("hello world")),
                .trailers(["Checksum": "abc", "X-Other": "1"]),
                .end(keepAlive: true),
            ]
        )
    }

    @Test func chunkedWithoutTrailersAndUppercaseHex() {
        let events = parseWhole("HTTP/1.1 200 OK\r\ntransfer-encoding: Chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n")
        #expect(events.dropFirst() == [.body([UInt8]("0123456789")), .end(keepAlive: true)])
    }

    @Test func closeDelimitedBodyEndsAtEOF() {
        let text = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end"
        let open = parseWhole(text)
        #expect(open.dropFirst() == [.body([UInt8]("until the end"))])
        let closed = parseWhole(text, eof: true)
        #expect(closed.dropFirst() == [.body([UInt8]("until the end")), .end(keepAlive: false)])
    }

    @Test func headAnd204And304HaveNoBody() {
        let withLength = "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"
        #expect(parseWhole(withLength, method: .head).last == .end(keepAlive: true))
        #expect(parseWhole("HTTP/1.1 204 No Content\r\n\r\n").last == .end(keepAlive: true))
        #expect(parseWhole("HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n").last == .end(keepAlive: true))
        // A HEAD response advertising chunked framing has no body either.
        #expect(parseWhole("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", method: .head).last
            == .end(keepAlive: true))
    }

    @Test func interimResponsesAreSkipped() throws {
        let text =
            "HTTP/1.1 100 Continue\r\n\r\n" + "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
            + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        let events = parseWhole(text)
        let h = try #require(head(events))
        #expect(h.status == 200)
        #expect(h.headers["link"] == nil)
        #expect(events.count == 3)
        #expect(events.last == .end(keepAlive: true))
    }

    @Test func switchingProtocolsIsRefused() {
        let events = parseWhole("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n")
        #expect(errorReason(events) == .switchingProtocolsNotSupported)
        #expect(errorOffset(events) == 9)
    }

    @Test func keepAliveRules() {
        #expect(parseWhole("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n").last == .end(keepAlive: false))
        #expect(parseWhole("HTTP/1.1 200 OK\r\nConnection: Keep-Alive, CLOSE\r\nContent-Length: 0\r\n\r\n").last
            == .end(keepAlive: false))
        #expect(parseWhole("HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n").last
            == .end(keepAlive: true))
        // HTTP/1.0 is never reused, even with Connection: keep-alive.
        #expect(parseWhole("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n").last
            == .end(keepAlive: false))
        // A close-delimited body can never be followed by another response.
        #expect(parseWhole("HTTP/1.1 200 OK\r\n\r\nx", eof: true).last == .end(keepAlive: false))
    }

    @Test func identicalRepeatedContentLengthsAreAccepted() {
        let a = parseWhole("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc")
        #expect(a.dropFirst() == [.body([UInt8]("abc")), .end(keepAlive: true)])
        let b = parseWhole("HTTP/1.1 200 OK\r\nContent-Length: 3, 3\r\n\r\nabc")
        #expect(b.dropFirst() == [.body([UInt8]("abc")), .end(keepAlive: true)])
    }

    @Test func keepAliveConnectionCarriesTwoResponses() throws {
        var parser = ResponseParser(requestMethod: .get)
        let first = try parser.parse(
            [UInt8]("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\naHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        )
        #expect(first.count == 3)
        #expect(parser.isIdle)
        #expect(parser.bufferedByteCount == 38)
        parser.expectResponse(to: .head)
        var second: [ResponseEvent] = []
        while let e = try parser.next() { second.append(e) }
        #expect(second.count == 2)
        #expect(second.last == .end(keepAlive: true))
        #expect(parser.bufferedByteCount == 0)
    }

    @Test func bodyIsReportedAsSlicesOfTheFedBuffer() throws {
        var parser = ResponseParser()
        let bytes = [UInt8]("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nbody")
        parser.feed(bytes)
        _ = try parser.next()
        guard case .body(let slice) = try parser.next() else {
            Issue.record("expected a body event")
            return
        }
        #expect(Array(slice) == [UInt8]("body"))
        // The slice keeps the fed array's indices: it is a view, not a copy.
        #expect(slice.startIndex == bytes.count - 4)
        slice.withUnsafeBufferPointer { s in
            bytes.withUnsafeBufferPointer { b in #expect(s.baseAddress == b.baseAddress! + bytes.count - 4) }
        }
    }
}

@Suite struct ResponseParserErrorTests {
    @Test func conflictingContentLength() {
        let a = parseWhole("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd")
        #expect(errorReason(a) == .conflictingContentLength)
        #expect(errorOffset(a) == 52)
        #expect(errorReason(parseWhole("HTTP/1.1 200 OK\r\nContent-Length: 3, 4\r\n\r\nabcd")) == .conflictingContentLength)
    }

    @Test func invalidContentLength() {
        for value in ["-1", "abc", "1 2", "+5", "", "0x10", "99999999999999999999999", "1,", ",1"] {
            let events = parseWhole("HTTP/1.1 200 OK\r\nContent-Length: \(value)\r\n\r\n")
            #expect(errorReason(events) == .invalidContentLength, "Content-Length: \(value)")
        }
    }

    @Test func transferEncodingWithContentLength() {
        let events = parseWhole("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
        #expect(errorReason(events) == .contentLengthWithTransferEncoding)
    }

    @Test func transferEncodingOtherThanChunked() {
        #expect(errorReason(parseWhole("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n")) == .unsupportedTransferEncoding("gzip"))
        #expect(errorReason(parseWhole("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n"))
            == .unsupportedTransferEncoding("chunked, gzip"))
        #expect(errorReason(parseWhole("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"))
            == .unsupportedTransferEncoding("gzip,chunked"))
        #expect(errorReason(parseWhole("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n"))
            == .unsupportedTransferEncoding("chunked, chunked"))
        #expect(errorReason(parseWhole("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")) == .transferEncodingInHTTP10)
    }

    @Test func obsoleteLineFoldingIsReplacedWithOneSpace() throws {
        // RFC 9112 §5.2: a user agent replaces each obs-fold (OWS CRLF RWS) with SP before reading the value.
        let events = parseWhole("HTTP/1.1 200 OK\r\nX-A: one \r\n  two\r\n\tthree \t\r\nContent-Length: 2\r\n\r\nok")
        let h = try #require(head(events))
        #expect(h.headers.fields.map(\.name) == ["X-A", "Content-Length"])
        #expect(h.headers["x-a"] == "one two three")
        #expect(events.dropFirst() == [.body([UInt8]("ok")), .end(keepAlive: true)])
        // A fold holding only whitespace adds nothing.
        let blank = try #require(head(parseWhole("HTTP/1.1 204 No Content\r\nX-B: b\r\n \t \r\n\r\n")))
        #expect(blank.headers["x-b"] == "b")
        let empty = try #require(head(parseWhole("HTTP/1.1 204 No Content\r\nX-B:\r\n b\r\n\r\n")))
        #expect(empty.headers["x-b"] == "b")
    }

    @Test func foldedFramingFieldsAreReadWhole() {
        // The unfolded value decides the framing, not its first line.
        #expect(parseWhole("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n , 3\r\n\r\nabc").dropFirst()
            == [.body([UInt8]("abc")), .end(keepAlive: true)])
        let split = parseWhole("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n 0\r\n\r\n0123456789")
        #expect(errorReason(split) == .invalidContentLength)
        #expect(errorOffset(split) == 36)
        #expect(errorReason(parseWhole("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n , 3\r\n\r\nok"))
            == .conflictingContentLength)
        #expect(errorReason(parseWhole("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n , gzip\r\n\r\n"))
            == .unsupportedTransferEncoding("chunked , gzip"))
        #expect(parseWhole("HTTP/1.1 200 OK\r\nConnection: keep-alive,\r\n close\r\nContent-Length: 0\r\n\r\n").last
            == .end(keepAlive: false))
        // A field after the framing one is what a fold continues.
        #expect(parseWhole("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX: 1\r\n 0\r\n\r\nok").dropFirst()
            == [.body([UInt8]("ok")), .end(keepAlive: true)])
    }

    @Test func foldedTrailersAreUnfolded() {
        let events = parseWhole("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: a\r\n b\r\n\r\n")
        #expect(events.dropFirst() == [.trailers(["T": "a b"]), .end(keepAlive: true)])
        let orphan = parseWhole("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n b\r\n\r\n")
        #expect(errorReason(orphan) == .obsoleteLineFolding)
    }

    @Test func foldWithoutAFieldToContinueOrWithBadBytes() {
        // Whitespace right after the status line has no field to continue (RFC 9112 §2.2 allows refusing it).
        let events = parseWhole("HTTP/1.1 200 OK\r\n\tX: 1\r\n\r\n")
        #expect(errorReason(events) == .obsoleteLineFolding)
        #expect(errorOffset(events) == 17)
        #expect(errorReason(parseWhole("HTTP/1.1 100 Continue\r\nA: 1\r\n\r\nHTTP/1.1 200 OK\r\n x\r\n\r\n"))
            == .obsoleteLineFolding)
        let control = parseWhole("HTTP/1.1 200 OK\r\nX: 1\r\n a\u{1}b\r\n\r\n")
        #expect(errorReason(control) == .invalidHeaderValue)
        #expect(errorOffset(control) == 25)
    }

    @Test func foldsDoNotCountAsFields() throws {
        let limits = ResponseParser.Limits(maxHeaderCount: 2)
        let events = parseWhole("HTTP/1.1 200 OK\r\nA: 1\r\nContent-Length: 0\r\n 0\r\n\r\n", limits: limits)
        #expect(errorReason(events) == .invalidContentLength)
        let folded = parseWhole("HTTP/1.1 204 No Content\r\nA: 1\r\n 2\r\n 3\r\nB: 4\r\n\r\n", limits: limits)
        #expect(try #require(head(folded)).headers.fields == [.init(name: "A", value: "1 2 3"), .init(name: "B", value: "4")])
    }

    @Test func whitespaceBeforeColon() {
        let events = parseWhole("HTTP/1.1 200 OK\r\nContent-Length : 5\r\n\r\nhello")
        #expect(errorReason(events) == .whitespaceBeforeColon)
        #expect(errorOffset(events) == 31)
    }

    @Test func invalidHeaderBytes() {
        #expect(errorReason(parseWhole("HTTP/1.1 200 OK\r\nX\u{1}Y: 1\r\n\r\n")) == .invalidHeaderName)
        #expect(errorReason(parseWhole("HTTP/1.1 200 OK\r\n: empty name\r\n\r\n")) == .invalidHeaderName)
        #expect(errorReason(parseWhole("HTTP/1.1 200 OK\r\nX(Y): 1\r\n\r\n")) == .invalidHeaderName)
        #expect(errorReason(parseWhole("HTTP/1.1 200 OK\r\nNoColon\r\n\r\n")) == .missingColon)
        let nul = parseWhole("HTTP/1.1 200 OK\r\nX: a\u{0}b\r\n\r\n")
        #expect(errorReason(nul) == .invalidHeaderValue)
        #expect(errorOffset(nul) == 21)
        #expect(errorReason(parseWhole("HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n")) == .invalidHeaderValue)
        #expect(errorReason(parseWhole("HTTP/1.1 200 OK\r\nX: a\u{7F}\r\n\r\n")) == .invalidHeaderValue)
        #expect(errorReason(parseWhole("HTTP/1.1 200 OK\r\nX: 1\n\r\n")) == .bareLineFeed)
        // obs-text (bytes >= 0x80) is allowed in values.
        var bytes = [UInt8]("HTTP/1.1 200 OK\r\nX: caf")
        bytes += [0xE9] + [UInt8]("\r\nContent-Length: 0\r\n\r\n")
        #expect(parseWhole(bytes).last == .end(keepAlive: true))
    }

    @Test func invalidStatusLines() {
        let cases: [(String, ResponseParseError.Reason)] = [
            ("HTTP/1.1 2000 OK\r\n\r\n", .invalidStatusLine),
            ("HTTP/1.1 20 OK\r\n\r\n", .invalidStatusCode),
            ("HTTP/1.1 abc OK\r\n\r\n", .invalidStatusCode),
            ("HTTP/1.1 099 Low\r\n\r\n", .invalidStatusCode),
            ("HTTP/1.1 600 High\r\n\r\n", .invalidStatusCode),
            ("HTTP/2.0 200 OK\r\n\r\n", .unsupportedVersion),
            ("HTTP/1.1  200 OK\r\n\r\n", .invalidStatusCode),
            ("http/1.1 200 OK\r\n\r\n", .invalidStatusLine),
            ("ICY 200 OK\r\n\r\n", .invalidStatusLine),
            ("HTTP/1.1 200\tOK\r\n\r\n", .invalidStatusLine),
            ("HTTP/1.1 200 O\u{1}K\r\n\r\n", .invalidStatusLine),
            ("HTTP/1.1 200 OK\n\r\n", .bareLineFeed),
            ("\r\nHTTP/1.1 200 OK\r\n\r\n", .invalidStatusLine),
        ]
        for (text, reason) in cases {
            #expect(errorReason(parseWhole(text)) == reason, "\(text.debugDescription)")
        }
    }

    @Test func badChunkSizes() {
        let prefix = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        let cases: [(String, ResponseParseError.Reason, Int)] = [
            ("x\r\n", .invalidChunkSize, 0),
            ("\r\n", .invalidChunkSize, 0),
            ("-1\r\n", .invalidChunkSize, 0),
            ("5x\r\nhello\r\n", .invalidChunkSize, 1),
            ("8000000000000000\r\n", .chunkSizeOverflow, 15),
            ("fffffffffffffffff\r\n", .chunkSizeOverflow, 15),
            ("5\nhello\r\n", .bareLineFeed, 1),
            ("5 x\r\nhello\r\n", .invalidChunkExtension, 2),
            ("5;a\u{1}\r\nhello\r\n", .invalidChunkExtension, 3),
            ("5\r\nhelloXX0\r\n\r\n", .missingChunkTerminator, 8),
            ("5\r\nhello\rX0\r\n\r\n", .missingChunkTerminator, 9),
            ("5\r\nhello\r\n0\r\nBad Name: 1\r\n\r\n", .whitespaceBeforeColon, 16),
        ]
        for (chunks, reason, offset) in cases {
            let events = parseWhole(prefix + chunks)
            #expect(errorReason(events) == reason, "\(chunks.debugDescription)")
            #expect(errorOffset(events) == prefix.utf8.count + offset, "\(chunks.debugDescription)")
        }
    }

    @Test func bodiesCutShortAtEOF() {
        let fixed = parseWhole("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", eof: true)
        #expect(fixed.dropFirst() == [.body([UInt8]("abc")), .error(ResponseParseError(.truncatedBody(missing: 7), offset: 42))])
        let inChunk = parseWhole("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", eof: true)
        #expect(errorReason(inChunk) == .truncatedBody(missing: 3))
        let beforeLastChunk = parseWhole("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n", eof: true)
        #expect(errorReason(beforeLastChunk) == .truncatedBody(missing: nil))
        let inTrailers = parseWhole("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: 1\r\n", eof: true)
        #expect(errorReason(inTrailers) == .truncatedBody(missing: nil))
        let inHead = parseWhole("HTTP/1.1 200 OK\r\nContent-Le", eof: true)
        #expect(errorReason(inHead) == .truncatedHead)
        #expect(errorOffset(inHead) == 27)
        let nothing = parseWhole([], eof: true)
        #expect(nothing == [.error(ResponseParseError(.closedBeforeResponse, offset: 0))])
    }

    @Test func errorsAreSticky() {
        var parser = ResponseParser()
        parser.feed([UInt8]("HTTP/1.1 200 OK\r\nContent-Length : 1\r\n\r\n"))
        #expect(throws: ResponseParseError.self) { try parser.next() }
        parser.feed([UInt8]("x"))
        #expect(throws: ResponseParseError(.whitespaceBeforeColon, offset: 31)) { try parser.next() }
    }
}

@Suite struct ResponseParserLimitTests {
    @Test func headBytesLimit() throws {
        let limits = ResponseParser.Limits(maxHeadBytes: 64)
        let ok = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX: 12345678901234\r\n\r\n"
        #expect(ok.utf8.count == 57)
        #expect(parseWhole(ok, limits: limits).last == .end(keepAlive: true))
        let tooBig = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX: 12345678901234567890123\r\n\r\n"
        let events = parseWhole(tooBig, limits: limits)
        #expect(errorReason(events) == .headTooLarge(limit: 64))
        #expect(errorOffset(events) == 64)
        // A header line that never ends is refused as soon as it crosses the limit, not buffered forever.
        var parser = ResponseParser(limits: limits)
        parser.feed([UInt8]("HTTP/1.1 200 OK\r\nX: "))
        #expect(try parser.next() == nil)
        parser.feed([UInt8](repeating: UInt8(ascii: "a"), count: 100))
        #expect(throws: ResponseParseError(.headTooLarge(limit: 64), offset: 64)) { try parser.next() }
    }

    @Test func defaultHeadLimitIs64KiB() {
        let filler = String(repeating: "a", count: 64 * 1024)
        let events = parseWhole("HTTP/1.1 200 OK\r\nX: \(filler)\r\n\r\n")
        #expect(errorReason(events) == .headTooLarge(limit: 65536))
        #expect(ResponseParser.Limits().maxHeaderCount == 100)
    }

    @Test func headerCountLimit() {
        let limits = ResponseParser.Limits(maxHeaderCount: 3)
        let three = "HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nContent-Length: 0\r\n\r\n"
        #expect(parseWhole(three, limits: limits).last == .end(keepAlive: true))
        let four = "HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\nContent-Length: 0\r\n\r\n"
        #expect(errorReason(parseWhole(four, limits: limits)) == .tooManyHeaders(limit: 3))
        let trailers = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n"
        #expect(errorReason(parseWhole(trailers, limits: limits)) == .tooManyHeaders(limit: 3))
    }

    @Test func chunkExtensionLimit() {
        let limits = ResponseParser.Limits(maxChunkExtensionBytes: 10)
        let prefix = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        #expect(parseWhole(prefix + "1;abcdefghi\r\nx\r\n0\r\n\r\n", limits: limits).last == .end(keepAlive: true))
        let long = parseWhole(prefix + "1;abcdefghij\r\nx\r\n0\r\n\r\n", limits: limits)
        #expect(errorReason(long) == .chunkExtensionTooLong(limit: 10))
        // An endless chunk-size line is cut off at the extension limit plus 64 bytes for the size.
        var parser = ResponseParser(limits: limits)
        parser.feed([UInt8](prefix))
        _ = try? parser.next()
        parser.feed([UInt8](repeating: UInt8(ascii: "0"), count: 200))
        #expect(throws: ResponseParseError(.chunkExtensionTooLong(limit: 10), offset: prefix.utf8.count + 74)) {
            try parser.next()
        }
    }

    @Test func trailerSizeLimit() {
        let limits = ResponseParser.Limits(maxTrailerBytes: 16)
        let prefix = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n"
        #expect(parseWhole(prefix + "X: 123456789\r\n\r\n", limits: limits).last == .end(keepAlive: true))
        let events = parseWhole(prefix + "X: 1234567890\r\n\r\n", limits: limits)
        #expect(errorReason(events) == .trailersTooLarge(limit: 16))
    }

    @Test func interimResponseLimit() {
        let limits = ResponseParser.Limits(maxInterimResponses: 2)
        let two = String(repeating: "HTTP/1.1 100 Continue\r\n\r\n", count: 2) + "HTTP/1.1 204 No Content\r\n\r\n"
        #expect(parseWhole(two, limits: limits).last == .end(keepAlive: true))
        let three = String(repeating: "HTTP/1.1 100 Continue\r\n\r\n", count: 3) + "HTTP/1.1 204 No Content\r\n\r\n"
        #expect(errorReason(parseWhole(three, limits: limits)) == .tooManyInterimResponses(limit: 2))
    }
}
