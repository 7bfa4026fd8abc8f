@testable import CourierCore
import Testing

/// `data:` URLs (RFC 2397) as the parser and ``DataProtocol`` read them: the RFC's own examples, base64 with and
/// without padding, percent-encoding, and malformed input refused with a message that says what is wrong.
@Suite struct DataURLTests {
    func parse(_ url: String) throws -> DataURL {
        let parsed = try #require(HTTPURL(anyScheme: url), "'\(url)' does not parse")
        #expect(parsed.scheme == "data")
        #expect(!parsed.hasAuthority)
        #expect(parsed.description == url.split(separator: "#", maxSplits: 1).first.map(String.init))
        return try DataURL(parsed.path)
    }

    @Test func theRFCsExamples() throws {
        let note = try parse("data:,A%20brief%20note")
        #expect(note.mediaType == "text/plain;charset=US-ASCII")
        #expect(note.bytes == Array("A brief note".utf8))

        // RFC 2397 §4's second example has `%fg`, not an escape (refused below); with a real one:
        let greek = try parse("data:text/plain;charset=iso-8859-7,%be%e3%be")
        #expect(greek.mediaType == "text/plain;charset=iso-8859-7")
        #expect(greek.bytes == [0xBE, 0xE3, 0xBE])
    }

    @Test func base64WithAndWithoutPaddingAndParametersOnly() throws {
        let hello = try parse("data:text/plain;base64,SGVsbG8sIFdvcmxkIQ==")
        #expect(hello.bytes == Array("Hello, World!".utf8))
        #expect(hello.mediaType == "text/plain")
        #expect(try parse("data:;base64,SGVsbG8sIFdvcmxkIQ").bytes == Array("Hello, World!".utf8))
        #expect(try parse("data:;base64,SGk").bytes == Array("Hi".utf8))
        #expect(try parse("data:;charset=utf-8,%C3%A9").mediaType == "text/plain;charset=utf-8")
        #expect(try parse("data:;charset=utf-8,%C3%A9").bytes == [0xC3, 0xA9])
        let png = try parse("data:image/png;base64,iVBORw0KGgo%3D")
        #expect(png.mediaType == "image/png")
        #expect(png.bytes.prefix(4) == [0x89, 0x50, 0x4E, 0x47])
        #expect(try parse("data:,").bytes.isEmpty)
        #expect(try parse("data:,a,b?c#frag").bytes == Array("a,b?c".utf8))
    }

    @Test func badInputIsAClearError() throws {
        let cases: [(String, String)] = [
            ("data:text/plain", "no ','"),
            ("data:;base64,SGVsbG8*", "base64"),
            ("data:;base64,S", "base64"),
            ("data:;base64,SG=sbG8=", "base64"),
            ("data:,100%", "'%'"),
            ("data:text/plain;charset=iso-8859-7,%be%fg%be", "'%'"),
            ("data:text,x", "type/subtype"),
            ("data:te xt/plain,x", ""),
            ("data:text/pl%0Aain,x", "control character"),
        ]
        for (url, words) in cases {
            guard let parsed = HTTPURL(anyScheme: url) else {
                #expect(words.isEmpty, "'\(url)' should parse as a URL")
                continue
            }
            #expect(throws: ProtocolPluginError.self, "\(url)") { try DataURL(parsed.path) }
            do {
                _ = try DataURL(parsed.path)
            } catch {
                #expect(error.message.contains(words), "\(url): \(error.message)")
            }
        }
    }

    @Test func dataProtocolAnswersGetHeadAndRefusesOtherMethods() async throws {
        let plugin = DataProtocol()
        let url = try #require(HTTPURL(anyScheme: "data:application/json,%7B%7D"))
        let get = try await plugin.respond(to: ProtocolRequest(url: url))
        #expect(get.status == 200)
        #expect(get.headers["content-type"] == "application/json")
        #expect(get.headers["content-length"] == "2")
        #expect(try await get.body.collect(upTo: 100) == Array("{}".utf8))
        let head = try await plugin.respond(to: ProtocolRequest(method: .head, url: url))
        #expect(head.headers["content-length"] == "2")
        #expect(try await head.body.next() == nil)
        let post = try await plugin.respond(to: ProtocolRequest(method: .post, url: url))
        #expect(post.status == 405)
        #expect(post.headers["allow"] == "GET, HEAD")
        await #expect(throws: ProtocolPluginError.self) {
            try await plugin.respond(to: ProtocolRequest(url: try #require(HTTPURL(anyScheme: "data:;base64,!!!!"))))
        }
    }
}
