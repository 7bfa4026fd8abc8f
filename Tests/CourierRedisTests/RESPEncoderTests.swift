import CourierRedis
import Testing

@Suite struct RESPEncoderTests {
    @Test func commandsAreArraysOfBulkStrings() {
        #expect(RESPEncoder.command([Array("SET".utf8), Array("k".utf8), Array("v\r\n".utf8)])
            == Array("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\nv\r\n\r\n".utf8))
        #expect(RESPEncoder.command([Array("PING".utf8), []]) == Array("*2\r\n$4\r\nPING\r\n$0\r\n\r\n".utf8))
        #expect(RedisCommand("GET", "key").encoded == Array("*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n".utf8))
    }

    @Test func aCommandDescribesItsNameNeverItsArguments() {
        let auth = RedisCommand("auth", "user", "secret")
        #expect(auth.name == "AUTH")
        #expect("\(auth)" == "AUTH")
    }

    static let values: [RESPValue] = [
        .simpleString("OK"), .error("ERR x"), .integer(-5), .bulkString([0, 13, 10, 255]), .null, .array([]),
        .array([.integer(1), .array([.null, .bulkString([])])]), .boolean(true), .boolean(false), .double(1.5),
        .double(-.infinity), .double(1e300), .bigNumber("-123456789012345678901234567890"), .blobError(Array("E\r\n".utf8)),
        .verbatimString(format: "mkd", text: Array("# t".utf8)),
        .map([RESPMapEntry(key: .simpleString("a"), value: .set([.integer(1)]))]), .push([.simpleString("message")]),
    ]

    @Test(arguments: values) func everyValueParsesBackToItself(value: RESPValue) throws {
        var parser = RESPParser()
        parser.feed(RESPEncoder.encode(value))
        #expect(try parser.next() == value)
        #expect(try parser.next() == nil)
        #expect(parser.bufferedByteCount == 0)
    }

    @Test func aNaNParsesBackToANaN() throws {
        var parser = RESPParser()
        parser.feed(RESPEncoder.encode(.double(.nan)))
        guard case .double(let value) = try parser.next() else {
            Issue.record("a double")
            return
        }
        #expect(value.isNaN)
    }
}
