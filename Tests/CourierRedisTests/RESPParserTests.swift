import CourierRedis
import Testing

/// Parses `text` fed whole: the replies, and the error if it threw.
private func parse(_ text: String, limits: RESPParser.Limits = .init()) -> (replies: [RESPValue], error: RESPParseError?) {
    parse([Array(text.utf8)[...]], limits: limits)
}

private func parse(_ pieces: [ArraySlice<UInt8>], limits: RESPParser.Limits = .init()) -> (replies: [RESPValue], error: RESPParseError?) {
    var parser = RESPParser(limits: limits)
    var replies: [RESPValue] = []
    do {
        for piece in pieces {
            parser.feed(piece)
            while let reply = try parser.next() { replies.append(reply) }
        }
        return (replies, nil)
    } catch {
        return (replies, error)
    }
}

private func one(_ text: String) throws -> RESPValue {
    let result = parse(text)
    #expect(result.error == nil)
    try #require(result.replies.count == 1)
    return result.replies[0]
}

@Suite struct RESPParserTests {
    // MARK: - Every type

    @Test func resp2Types() throws {
        #expect(try one("+OK\r\n") == .simpleString("OK"))
        #expect(try one("+\r\n") == .simpleString(""))
        #expect(try one("-ERR unknown command 'FOO'\r\n") == .error("ERR unknown command 'FOO'"))
        #expect(try one(":0\r\n") == .integer(0))
        #expect(try one(":-42\r\n") == .integer(-42))
        #expect(try one(":9223372036854775807\r\n") == .integer(.max))
        #expect(try one("$5\r\nhello\r\n") == .bulkString(Array("hello".utf8)))
        #expect(try one("$0\r\n\r\n") == .bulkString([]))
        #expect(try one("$4\r\na\r\nb\r\n") == .bulkString(Array("a\r\nb".utf8)), "bulk strings are binary-safe")
        #expect(try one("$-1\r\n") == .null)
        #expect(try one("*-1\r\n") == .null)
        #expect(try one("*0\r\n") == .array([]))
        #expect(try one("*2\r\n$3\r\nfoo\r\n:7\r\n") == .array([.bulkString(Array("foo".utf8)), .integer(7)]))
        #expect(try one("*2\r\n*1\r\n+a\r\n*-1\r\n") == .array([.array([.simpleString("a")]), .null]))
    }

    @Test func resp3Types() throws {
        #expect(try one("_\r\n") == .null)
        #expect(try one("#t\r\n") == .boolean(true))
        #expect(try one("#f\r\n") == .boolean(false))
        #expect(try one(",3.25\r\n") == .double(3.25))
        #expect(try one(",-1e3\r\n") == .double(-1000))
        #expect(try one(",inf\r\n") == .double(.infinity))
        #expect(try one(",-inf\r\n") == .double(-.infinity))
        guard case .double(let nan) = try one(",nan\r\n") else { Issue.record("nan is a double"); return }
        #expect(nan.isNaN)
        #expect(try one("(3492890328409238509324850943850943825024385\r\n") == .bigNumber("3492890328409238509324850943850943825024385"))
        #expect(try one("(-12\r\n") == .bigNumber("-12"))
        #expect(try one("!21\r\nSYNTAX invalid syntax\r\n") == .blobError(Array("SYNTAX invalid syntax".utf8)))
        #expect(try one("=15\r\ntxt:Some string\r\n") == .verbatimString(format: "txt", text: Array("Some string".utf8)))
        #expect(try one("%2\r\n+first\r\n:1\r\n$6\r\nsecond\r\n#f\r\n") == .map([
            RESPMapEntry(key: .simpleString("first"), value: .integer(1)),
            RESPMapEntry(key: .bulkString(Array("second".utf8)), value: .boolean(false)),
        ]))
        #expect(try one("%0\r\n") == .map([]))
        #expect(try one("~2\r\n:1\r\n:2\r\n") == .set([.integer(1), .integer(2)]))
        #expect(try one(">2\r\n+pubsub\r\n+message\r\n") == .push([.simpleString("pubsub"), .simpleString("message")]))
    }

    @Test func accessors() throws {
        #expect(RESPValue.bulkString(Array("x".utf8)).string == "x")
        #expect(RESPValue.simpleString("OK").bytes == Array("OK".utf8))
        #expect(RESPValue.integer(3).integer == 3)
        #expect(RESPValue.set([.null]).elements == [.null])
        #expect(RESPValue.blobError(Array("E".utf8)).errorMessage == "E")
        #expect(RESPValue.null.string == nil)
    }

    @Test func severalRepliesInOneFeed() {
        let result = parse("+OK\r\n:1\r\n$1\r\nx\r\n*1\r\n_\r\n")
        #expect(result.replies == [.simpleString("OK"), .integer(1), .bulkString([UInt8(ascii: "x")]), .array([.null])])
        #expect(result.error == nil)
    }

    @Test func nothingUntilTheReplyIsWhole() throws {
        var parser = RESPParser()
        parser.feed(Array("*2\r\n$3\r\nfo".utf8))
        #expect(try parser.next() == nil)
        #expect(parser.isMidReply)
        parser.feed(Array("o\r\n:1".utf8))
        #expect(try parser.next() == nil)
        parser.feed(Array("\r\n".utf8))
        #expect(try parser.next() == .array([.bulkString(Array("foo".utf8)), .integer(1)]))
        #expect(!parser.isMidReply)
        #expect(try parser.next() == nil)
    }

    // MARK: - Every split point

    static let samples = [
        "+OK\r\n-ERR x\r\n:123\r\n",
        "$5\r\nhello\r\n$-1\r\n$0\r\n\r\n",
        "*3\r\n$3\r\nSET\r\n*2\r\n:1\r\n*-1\r\n_\r\n*0\r\n",
        "%1\r\n+k\r\n~2\r\n#t\r\n,1.5\r\n>1\r\n(99\r\n!3\r\nERR\r\n=7\r\ntxt:abc\r\n",
    ]

    @Test(arguments: samples) func everySplitPointGivesTheSameReplies(sample: String) {
        let bytes = Array(sample.utf8)
        let whole = parse([bytes[...]])
        #expect(whole.error == nil)
        for cut in 0...bytes.count {
            #expect(parse([bytes[..<cut], bytes[cut...]]).replies == whole.replies, "cut at \(cut)")
        }
        for first in 0...bytes.count {
            for second in first...bytes.count {
                let pieces = [bytes[..<first], bytes[first..<second], bytes[second...]]
                #expect(parse(pieces).replies == whole.replies, "cuts at \(first) and \(second)")
            }
        }
        #expect(parse(bytes.map { [$0][...] }).replies == whole.replies, "byte by byte")
    }

    // MARK: - Hostile input

    @Test func hugeLengthsAreRefusedBeforeAnythingIsAllocated() throws {
        #expect(parse("$9223372036854775807\r\n").error?.kind == .bulkTooLong(.max))
        #expect(parse("$67108865\r\n").error?.kind == .bulkTooLong(67_108_865))
        #expect(parse("*2147483647\r\n").error?.kind == .aggregateTooLong(2_147_483_647))
        #expect(parse("%4611686018427387904\r\n").error?.kind == .aggregateTooLong(4_611_686_018_427_387_904), "a map's pairs count twice")
        #expect(parse("$99999999999999999999\r\n").error?.kind == .malformedLine, "over Int64")
        // Within the limits, a large announced count waits for its elements without reserving room for them all.
        var parser = RESPParser()
        parser.feed(Array("*1000000\r\n".utf8))
        #expect(try parser.next() == nil)
    }

    @Test func negativeLengthsOtherThanMinusOneAreRefused() {
        #expect(parse("$-2\r\n").error?.kind == .negativeLength(-2))
        #expect(parse("*-5\r\n").error?.kind == .negativeLength(-5))
        #expect(parse("!-1\r\n").error?.kind == .negativeLength(-1), "a blob error has no null")
        #expect(parse("~-1\r\n").error?.kind == .negativeLength(-1), "nor has a set")
        #expect(parse("%-1\r\n").error?.kind == .negativeLength(-1))
    }

    @Test func deepNestingIsRefusedAtTheLimit() {
        let limits = RESPParser.Limits(maxDepth: 4)
        #expect(parse(String(repeating: "*1\r\n", count: 4) + ":1\r\n", limits: limits).error == nil)
        let tooDeep = parse(String(repeating: "*1\r\n", count: 5) + ":1\r\n", limits: limits)
        #expect(tooDeep.error?.kind == .tooDeep)
        #expect(tooDeep.error?.offset == 16)
        // The default limit holds against a million levels, fed at once, without recursion.
        #expect(parse(String(repeating: "*1\r\n", count: 1_000_000)).error?.kind == .tooDeep)
    }

    @Test func linesAreBounded() {
        let limits = RESPParser.Limits(maxLineLength: 8)
        #expect(parse("+1234567\r\n", limits: limits).error == nil, "the type byte counts, the CRLF does not")
        #expect(parse("+12345678\r\n", limits: limits).error?.kind == .lineTooLong)
        #expect(parse("+" + String(repeating: "x", count: 100), limits: limits).error?.kind == .lineTooLong, "without waiting for its end")
    }

    /// Found by FuzzRESP: a long line ending in a bare `\n` was a stray line break when fed whole, but too long
    /// when fed in pieces (the length check ran before the `\n` arrived). The length is now checked first.
    @Test func aLongLinesErrorDoesNotDependOnTheSplit() {
        let limits = RESPParser.Limits(maxLineLength: 8)
        let bytes = Array("?0123456789abcdef\n".utf8)
        let whole = parse([bytes[...]], limits: limits)
        #expect(whole.error?.kind == .lineTooLong)
        for step in 1...bytes.count {
            let pieces = stride(from: 0, to: bytes.count, by: step).map { bytes[$0..<min(bytes.count, $0 + step)] }
            #expect(parse(pieces, limits: limits).error == whole.error, "\(step)-byte pieces")
        }
    }

    @Test func garbageIsATypedError() {
        #expect(parse("HTTP/1.1 200 OK\r\n").error?.kind == .unknownType(UInt8(ascii: "H")))
        #expect(parse("|1\r\n+a\r\n+b\r\n+c\r\n").error?.kind == .unknownType(UInt8(ascii: "|")), "attributes are not supported")
        #expect(parse("$?\r\n").error?.kind == .malformedLine, "nor streamed strings")
        #expect(parse("\r\n").error?.kind == .malformedLine)
        #expect(parse("+OK\n").error?.kind == .strayLineBreak)
        #expect(parse("+O\rK\r\n").error?.kind == .strayLineBreak)
        #expect(parse(":12a\r\n").error?.kind == .malformedLine)
        #expect(parse(":\r\n").error?.kind == .malformedLine)
        #expect(parse(":+1\r\n").error?.kind == .malformedLine)
        #expect(parse("$3\r\nfoobar\r\n").error?.kind == .missingTerminator)
        #expect(parse("#x\r\n").error?.kind == .malformedLine)
        #expect(parse(",1.2.3\r\n").error?.kind == .malformedLine)
        #expect(parse(",0x1p3\r\n").error?.kind == .malformedLine)
        #expect(parse("_x\r\n").error?.kind == .malformedLine)
        #expect(parse("(12a\r\n").error?.kind == .malformedLine)
        #expect(parse("=2\r\nab\r\n").error?.kind == .malformedLine, "a verbatim string needs its format")
        #expect(parse("=5\r\n\u{e9}t:x\r\n").error?.kind == .malformedLine, "a format is printable ASCII (found by FuzzRESP)")
    }

    @Test func anErrorSticksAndSaysWhere() throws {
        var parser = RESPParser()
        parser.feed(Array("+OK\r\n:1\r\n?\r\n".utf8))
        #expect(try parser.next() == .simpleString("OK"))
        #expect(try parser.next() == .integer(1))
        let first = #expect(throws: RESPParseError.self) { try parser.next() }
        #expect(first?.offset == 9)
        parser.feed(Array("+OK\r\n".utf8))
        let second = #expect(throws: RESPParseError.self) { try parser.next() }
        #expect(first == second)
        #expect(first?.description == "RESP: unknown type byte 0x3f at byte 9")
    }

    @Test func offsetsCountBytesAlreadyConsumed() throws {
        var parser = RESPParser()
        let reply = Array(("$70000\r\n" + String(repeating: "x", count: 70_000) + "\r\n").utf8)
        parser.feed(reply)
        #expect(try parser.next()?.bytes?.count == 70_000)
        parser.feed(Array("+OK\r\n!".utf8))
        #expect(try parser.next() == .simpleString("OK"))
        parser.feed(Array("x\r\n".utf8))
        let error = #expect(throws: RESPParseError.self) { try parser.next() }
        #expect(error?.offset == reply.count + 5)
    }
}
