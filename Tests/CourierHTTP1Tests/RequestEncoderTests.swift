import CourierCore
import CourierHTTP1
import Testing

@Suite struct RequestEncoderTests {
    func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func getWithoutBodyAddsHost() throws {
        var encoder = RequestEncoder()
        var out: [UInt8] = []
        let url = try #require(HTTPURL("http://example.com:8080/a/b?q=1"))
        let head = HTTPRequestHead(method: .get, url: url, headers: ["Accept": "*/*"])
        try encoder.writeHead(head, host: url.hostHeader, body: .none, into: &out)
        try encoder.writeEnd(into: &out)
        #expect(text(out) == "GET /a/b?q=1 HTTP/1.1\r\nHost: example.com:8080\r\nAccept: */*\r\n\r\n")
        #expect(!encoder.isWritingRequest)
    }

    @Test func callerHostIsKept() throws {
        var encoder = RequestEncoder()
        var out: [UInt8] = []
        let head = HTTPRequestHead(method: .get, target: "/", headers: ["host": "virtual.example"])
        try encoder.writeHead(head, host: "ignored", body: .none, into: &out)
        #expect(text(out) == "GET / HTTP/1.1\r\nhost: virtual.example\r\n\r\n")
    }

    @Test func emptyPostStatesZeroLength() throws {
        var encoder = RequestEncoder()
        var out: [UInt8] = []
        try encoder.writeHead(HTTPRequestHead(method: .post, target: "/"), host: "h", body: .none, into: &out)
        try encoder.writeEnd(into: &out)
        #expect(text(out) == "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n")
    }

    @Test func knownLengthBody() throws {
        var encoder = RequestEncoder()
        var out: [UInt8] = []
        try encoder.writeHead(HTTPRequestHead(method: .put, target: "/x"), host: "h", body: .contentLength(11), into: &out)
        try encoder.writeBodyPart([UInt8]("hello"), into: &out)
        try encoder.writeBodyPart([UInt8](" world")[...], into: &out)
        try encoder.writeEnd(into: &out)
        #expect(text(out) == "PUT /x HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\nhello world")
    }

    @Test func chunkedBodyWithTrailers() throws {
        var encoder = RequestEncoder()
        var out: [UInt8] = []
        try encoder.writeHead(HTTPRequestHead(method: .post, target: "/up"), host: "h", body: .chunked, into: &out)
        try encoder.writeBodyPart([UInt8]("hello"), into: &out)
        try encoder.writeBodyPart([UInt8](), into: &out)  // writes nothing: an empty chunk would end the body
        try encoder.writeBodyPart([UInt8](repeating: UInt8(ascii: "z"), count: 26), into: &out)
        try encoder.writeEnd(trailers: ["Digest": "sha-256=abc"], into: &out)
        let expected =
            "POST /up HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n" + "5\r\nhello\r\n"
            + "1a\r\n" + String(repeating: "z", count: 26) + "\r\n" + "0\r\nDigest: sha-256=abc\r\n\r\n"
        #expect(text(out) == expected)
    }

    @Test func chunkSizesInHex() throws {
        for size in [1, 15, 16, 255, 256, 4096, 65535, 100_000] {
            var encoder = RequestEncoder()
            var out: [UInt8] = []
            try encoder.writeHead(HTTPRequestHead(method: .post, target: "/"), host: "h", body: .chunked, into: &out)
            out.removeAll()
            try encoder.writeBodyPart([UInt8](repeating: 0, count: size), into: &out)
            let line = text(Array(out.prefix { $0 != 0x0D }))
            #expect(line == String(size, radix: 16), "size \(size)")
        }
    }

    @Test func encodedChunkedRequestParsesBackAsChunked() throws {
        // The encoder's chunk framing is the parser's: feed the body part of a request to the response parser.
        var encoder = RequestEncoder()
        var out: [UInt8] = []
        try encoder.writeHead(HTTPRequestHead(method: .post, target: "/"), host: "h", body: .chunked, into: &out)
        out = [UInt8]("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        try encoder.writeBodyPart([UInt8]("abc"), into: &out)
        try encoder.writeBodyPart([UInt8](repeating: 7, count: 300), into: &out)
        try encoder.writeEnd(trailers: ["T": "1"], into: &out)
        let events = parseWhole(out)
        #expect(events.dropFirst() == [.body([UInt8]("abc") + [UInt8](repeating: 7, count: 300)), .trailers(["T": "1"]), .end(keepAlive: true)])
    }

    @Test func injectionIsRefusedBeforeAnyByte() {
        let bad: [(HTTPRequestHead, String, RequestEncodingError.Reason)] = [
            (HTTPRequestHead(method: "GE T", target: "/"), "h", .invalidMethod("GE T")),
            (HTTPRequestHead(method: "", target: "/"), "h", .invalidMethod("")),
            (HTTPRequestHead(method: .get, target: "/a b"), "h", .invalidTarget("/a b")),
            (HTTPRequestHead(method: .get, target: "/a\r\nX: 1"), "h", .invalidTarget("/a\r\nX: 1")),
            (HTTPRequestHead(method: .get, target: ""), "h", .invalidTarget("")),
            (HTTPRequestHead(method: .get, target: "/é"), "h", .invalidTarget("/é")),
            (HTTPRequestHead(method: .get, target: "/", headers: ["X": "a\r\nEvil: 1"]), "h", .invalidHeaderValue(name: "X")),
            (HTTPRequestHead(method: .get, target: "/", headers: ["X": "a\nb"]), "h", .invalidHeaderValue(name: "X")),
            // obs-fold is unfolded in responses but never sent (RFC 9112 §5.2: a sender MUST NOT generate it).
            (HTTPRequestHead(method: .get, target: "/", headers: ["X": "a\r\n b"]), "h", .invalidHeaderValue(name: "X")),
            (HTTPRequestHead(method: .get, target: "/", headers: ["X": "a\u{0}b"]), "h", .invalidHeaderValue(name: "X")),
            (HTTPRequestHead(method: .get, target: "/", headers: ["Bad Name": "1"]), "h", .invalidHeaderName("Bad Name")),
            (HTTPRequestHead(method: .get, target: "/", headers: ["X\r\n": "1"]), "h", .invalidHeaderName("X\r\n")),
            (HTTPRequestHead(method: .get, target: "/", headers: ["": "1"]), "h", .invalidHeaderName("")),
            (HTTPRequestHead(method: .get, target: "/"), "h\r\nX: 1", .invalidHost("h\r\nX: 1")),
            (HTTPRequestHead(method: .get, target: "/"), "", .invalidHost("")),
            (HTTPRequestHead(method: .get, target: "/", headers: ["Content-Length": "5"]), "h", .framingHeaderSupplied("Content-Length")),
            (HTTPRequestHead(method: .get, target: "/", headers: ["transfer-encoding": "chunked"]), "h", .framingHeaderSupplied("transfer-encoding")),
        ]
        for (head, host, reason) in bad {
            var encoder = RequestEncoder()
            var out: [UInt8] = [1, 2, 3]
            #expect(throws: RequestEncodingError(reason)) {
                try encoder.writeHead(head, host: host, body: .none, into: &out)
            }
            #expect(out == [1, 2, 3], "nothing written for \(reason)")
            #expect(!encoder.isWritingRequest)
        }
    }

    @Test func bodyLengthIsEnforced() throws {
        var encoder = RequestEncoder()
        var out: [UInt8] = []
        try encoder.writeHead(HTTPRequestHead(method: .post, target: "/"), host: "h", body: .contentLength(3), into: &out)
        #expect(throws: RequestEncodingError(.bodyLongerThanDeclared(declared: 3))) {
            try encoder.writeBodyPart([UInt8]("abcd"), into: &out)
        }
        try encoder.writeBodyPart([UInt8]("ab"), into: &out)
        #expect(throws: RequestEncodingError(.bodyShorterThanDeclared(declared: 3, written: 2))) {
            try encoder.writeEnd(into: &out)
        }
        encoder.reset()
        try encoder.writeHead(HTTPRequestHead(method: .get, target: "/"), host: "h", body: .none, into: &out)
        #expect(throws: RequestEncodingError(.bodyWithoutFraming)) { try encoder.writeBodyPart([UInt8]("x"), into: &out) }
        #expect(throws: RequestEncodingError(.trailersWithoutChunkedBody)) { try encoder.writeEnd(trailers: ["T": "1"], into: &out) }
        encoder.reset()
        #expect(throws: RequestEncodingError(.negativeContentLength(-1))) {
            try encoder.writeHead(HTTPRequestHead(method: .post, target: "/"), host: "h", body: .contentLength(-1), into: &out)
        }
    }

    @Test func badTrailersAreRefused() throws {
        var encoder = RequestEncoder()
        var out: [UInt8] = []
        try encoder.writeHead(HTTPRequestHead(method: .post, target: "/"), host: "h", body: .chunked, into: &out)
        let before = out
        #expect(throws: RequestEncodingError(.invalidHeaderValue(name: "T"))) {
            try encoder.writeEnd(trailers: ["T": "1\r\n"], into: &out)
        }
        #expect(out == before)
    }
}
