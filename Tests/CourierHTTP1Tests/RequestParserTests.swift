import CourierCore
import CourierHTTP1
import Testing

/// What a request parse produced, adjacent body slices merged so that any split of the input compares equal.
enum ParsedRequest: Hashable, CustomStringConvertible {
    case head(method: String, target: String, headers: HTTPHeaders, minor: Int)
    case body([UInt8])
    case end(keepAlive: Bool)
    case error(RequestParseError.Reason)

    var description: String {
        switch self {
        case .head(let method, let target, let headers, let minor): return "head(\(method) \(target) 1.\(minor), \(headers.count) fields)"
        case .body(let bytes): return "body(\(String(decoding: bytes, as: UTF8.self).debugDescription))"
        case .end(let keepAlive): return "end(keepAlive: \(keepAlive))"
        case .error(let reason): return "error(\(reason))"
        }
    }
}

/// Feeds `pieces` in order (then EOF when asked), draining events after each, up to and including the first error.
func parseRequestPieces(_ pieces: [[UInt8]], limits: RequestParser.Limits = .init(), eof: Bool = false) -> [ParsedRequest] {
    var parser = RequestParser(limits: limits)
    var out: [ParsedRequest] = []
    func drain() -> Bool {
        do {
            while let event = try parser.next() {
                switch event {
                case .head(let head, let version):
                    out.append(.head(method: head.method.rawValue, target: head.target, headers: head.headers, minor: version.minor))
                case .body(let bytes):
                    if case .body(let earlier)? = out.last {
                        out[out.count - 1] = .body(earlier + bytes)
                    } else {
                        out.append(.body(Array(bytes)))
                    }
                case .end(let keepAlive):
                    out.append(.end(keepAlive: keepAlive))
                }
            }
            return true
        } catch {
            out.append(.error(error.reason))
            return false
        }
    }
    for piece in pieces {
        parser.feed(piece)
        guard drain() else { return out }
    }
    if eof {
        parser.eof()
        _ = drain()
    }
    return out
}

func parseRequest(_ text: String, limits: RequestParser.Limits = .init(), eof: Bool = false) -> [ParsedRequest] {
    parseRequestPieces([Array(text.utf8)], limits: limits, eof: eof)
}

/// The request parser on its own: framing, keep-alive, limits and the hostile inputs a server must refuse.
@Suite struct RequestParserTests {
    @Test func aGetWithoutBodyEndsAtItsHead() {
        let events = parseRequest("GET /items?x=1 HTTP/1.1\r\nHost: a\r\nAccept: */*\r\n\r\n")
        #expect(events == [
            .head(method: "GET", target: "/items?x=1", headers: ["Host": "a", "Accept": "*/*"], minor: 1),
            .end(keepAlive: true),
        ])
    }

    @Test func aContentLengthBodyArrivesWholeWhateverTheSplit() {
        let text = "POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\nhello world"
        let whole = parseRequest(text)
        #expect(whole.last == .end(keepAlive: true))
        #expect(whole.contains(.body(Array("hello world".utf8))))
        let bytes = Array(text.utf8)
        #expect(parseRequestPieces(bytes.map { [$0] }) == whole, "byte by byte")
        for cut in 1..<bytes.count {
            #expect(parseRequestPieces([Array(bytes[..<cut]), Array(bytes[cut...])]) == whole, "cut at \(cut)")
        }
    }

    @Test func aChunkedBodyLosesItsFramingAndTrailers() {
        let events = parseRequest(
            "POST /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Sum: 1\r\n\r\n"
        )
        #expect(events.dropFirst() == [.body(Array("hello world".utf8)), .end(keepAlive: true)])
    }

    @Test func pipelinedRequestsComeOutInOrder() {
        let events = parseRequest(
            "GET /1 HTTP/1.1\r\nHost: a\r\n\r\nPOST /2 HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nokGET /3 HTTP/1.1\r\nHost: a\r\n\r\n"
        )
        let targets = events.compactMap { event -> String? in
            if case .head(_, let target, _, _) = event { return target }
            return nil
        }
        #expect(targets == ["/1", "/2", "/3"])
        #expect(events.filter { $0 == .end(keepAlive: true) }.count == 3)
    }

    @Test func connectionCloseAndHTTP10EndTheConnection() {
        let close = parseRequest("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\nGET /more HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(close.count == 2)
        #expect(close.last == .end(keepAlive: false))
        let old = parseRequest("GET / HTTP/1.0\r\n\r\n")
        #expect(old == [.head(method: "GET", target: "/", headers: [:], minor: 0), .end(keepAlive: false)])
    }

    @Test func leadingEmptyLinesAreSkipped() {
        #expect(parseRequest("\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n").count == 2)
    }

    @Test func theEndOfInputBetweenRequestsIsQuietAndInsideOneIsTruncated() {
        #expect(parseRequest("GET / HTTP/1.1\r\nHost: a\r\n\r\n", eof: true).last == .end(keepAlive: true))
        #expect(parseRequest("GET / HTTP/1.1\r\nHo", eof: true) == [.error(.truncated)])
        #expect(parseRequest("PUT / HTTP/1.1\r\nHost: a\r\nContent-Length: 9\r\n\r\nabc", eof: true).last == .error(.truncated))
    }

    // MARK: - Refused

    @Test(arguments: [
        ("GET /a\r\n\r\n", RequestParseError.Reason.invalidRequestLine),
        ("GET  /a HTTP/1.1\r\n\r\n", .invalidRequestLine),
        ("GET /a http/1.1\r\n\r\n", .invalidRequestLine),
        ("G(T /a HTTP/1.1\r\n\r\n", .invalidRequestLine),
        ("GET /a b HTTP/1.1\r\n\r\n", .invalidRequestLine),
        ("GET /\u{7F} HTTP/1.1\r\n\r\n", .invalidRequestLine),
        ("GET a HTTP/1.1\r\nHost: a\r\n\r\n", .invalidRequestTarget),
        ("GET / HTTP/2.0\r\nHost: a\r\n\r\n", .unsupportedVersion),
        ("GET / HTTP/1.1\r\n\r\n", .missingHost),
        ("GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", .multipleHosts),
        ("GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n folded\r\n\r\n", .message(.obsoleteLineFolding)),
        ("GET / HTTP/1.1\r\nHost : a\r\n\r\n", .message(.whitespaceBeforeColon)),
        ("GET / HTTP/1.1\nHost: a\r\n\r\n", .message(.bareLineFeed)),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: abc\r\n\r\n", .message(.invalidContentLength)),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 6\r\n\r\n", .message(.conflictingContentLength)),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", .message(.conflictingContentLength)),
        ("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", .message(.transferEncodingInHTTP10)),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", .message(.invalidChunkSize)),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n", .message(.invalidChunkSize)),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000000\r\n", .message(.chunkSizeOverflow)),
        ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX", .message(.missingChunkTerminator)),
    ])
    func malformedRequestsAreRefusedWith400(text: String, reason: RequestParseError.Reason) {
        let events = parseRequest(text)
        #expect(events.last == .error(reason), "\(text.debugDescription): \(events)")
        #expect(RequestParseError(reason).status == (reason == .unsupportedVersion ? 505 : 400))
    }

    /// Request smuggling: a front that frames by Content-Length and a back that frames by chunks read different
    /// requests from the same bytes. The parser frames by neither: it refuses, and nothing after it comes out.
    @Test(arguments: [
        "Content-Length: 4\r\nTransfer-Encoding: chunked",
        "Transfer-Encoding: chunked\r\nContent-Length: 4",
        "Content-Length: 4\r\nTransfer-Encoding: gzip, chunked",
    ])
    func contentLengthWithTransferEncodingIsRefusedAndNothingFollows(fields: String) {
        var parser = RequestParser()
        parser.feed(Array("POST / HTTP/1.1\r\nHost: a\r\n\(fields)\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n".utf8))
        #expect(throws: RequestParseError.self) { _ = try parser.next() }
        do {
            _ = try parser.next()
            Issue.record("the parser went on after refusing")
        } catch {
            #expect(error.reason == .message(.contentLengthWithTransferEncoding))
            #expect(error.status == 400)
        }
    }

    @Test func aTransferCodingOtherThanChunkedIsNotImplemented() {
        let events = parseRequest("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n")
        #expect(events == [.error(.message(.unsupportedTransferEncoding("gzip")))])
        #expect(RequestParseError(.message(.unsupportedTransferEncoding("gzip"))).status == 501)
        let doubled = parseRequest("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n")
        #expect(doubled == [.error(.message(.unsupportedTransferEncoding("chunked,chunked")))])
    }

    @Test func aHugeHeadIsRefusedBeforeItEnds() {
        let limits = RequestParser.Limits(maxHeadBytes: 4096)
        var parser = RequestParser(limits: limits)
        parser.feed(Array("GET / HTTP/1.1\r\nHost: a\r\nX-Big: ".utf8))
        var refused: RequestParseError?
        for _ in 0..<100 where refused == nil {
            parser.feed([UInt8](repeating: UInt8(ascii: "a"), count: 1024))
            do { _ = try parser.next() } catch { refused = error }
        }
        #expect(refused?.reason == .message(.headTooLarge(limit: 4096)))
        #expect(refused?.status == 431)
        let many = (0..<200).map { "X-\($0): 1\r\n" }.joined()
        let tooMany = parseRequest("GET / HTTP/1.1\r\nHost: a\r\n\(many)\r\n")
        #expect(tooMany.last == .error(.message(.tooManyHeaders(limit: 100))))
    }

    @Test func aBodyOverTheLimitIsRefusedWith413() {
        let limits = RequestParser.Limits(maxBodyBytes: 10)
        #expect(parseRequest("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\n", limits: limits)
            == [.error(.bodyTooLarge(limit: 10))])
        let chunked = parseRequest(
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n6\r\nabcdef\r\n0\r\n\r\n", limits: limits
        )
        #expect(chunked.last == .error(.bodyTooLarge(limit: 10)))
        #expect(RequestParseError(.bodyTooLarge(limit: 10)).status == 413)
    }

    @Test func anEndlessChunkSizeLineIsRefused() {
        let events = parseRequest(
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;" + String(repeating: "x", count: 4000),
            limits: RequestParser.Limits(maxChunkExtensionBytes: 100)
        )
        #expect(events.last == .error(.message(.chunkExtensionTooLong(limit: 100))))
    }

    /// Random requests, valid and broken, parse the same in one piece and in random pieces (the parser keeps no
    /// state that depends on where reads end), and every run ends in events or one error.
    @Test func anySplitParsesTheSameAsTheWhole() {
        var random = SystemRandomNumberGenerator()
        let parts = [
            "GET / HTTP/1.1\r\n", "POST /x HTTP/1.1\r\n", "Host: a\r\n", "Content-Length: 3\r\n", "Transfer-Encoding: chunked\r\n",
            "\r\n", "abc", "3\r\nxyz\r\n", "0\r\n\r\n", "X: \u{1}\r\n", " fold\r\n", "\n", "ffffffffffffffffff\r\n",
        ]
        for _ in 0..<300 {
            let text = (0..<Int.random(in: 1...8, using: &random)).map { _ in parts.randomElement(using: &random)! }.joined()
            let bytes = Array(text.utf8)
            let whole = parseRequestPieces([bytes], eof: true)
            var pieces: [[UInt8]] = []
            var rest = bytes[...]
            while !rest.isEmpty {
                let count = Int.random(in: 1...max(1, rest.count), using: &random)
                pieces.append(Array(rest.prefix(count)))
                rest = rest.dropFirst(count)
            }
            #expect(parseRequestPieces(pieces, eof: true) == whole, "\(text.debugDescription) in \(pieces.map(\.count))")
        }
    }
}
