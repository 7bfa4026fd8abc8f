import CourierCore
import CourierKit
import CourierTestSupport
import Foundation
import Testing

/// `Response.decode`: a body into a model with the decoder the caller configures, and, when it cannot be, an error
/// that tells a server's error page from a changed schema (status, content type, the body's first bytes).
@Suite struct ResponseDecodingTests {
    struct Product: Decodable, Equatable {
        var id: Int
        var displayName: String
    }

    static let server: RecordingServer = {
        try! RecordingServer { _, request in
            let json = [("Content-Type", "application/json")]
            switch request.path {
            case "/product": return RecordingServer.Reply(headers: json, body: #"{"id": 7, "display_name": "Lamp"}"#)
            case "/missing": return RecordingServer.Reply(status: 404, headers: [("Content-Type", "text/html")], body: "<h1>Not here</h1>")
            case "/changed": return RecordingServer.Reply(headers: json, body: #"{"id": "seven", "display_name": "Lamp"}"#)
            case "/long": return RecordingServer.Reply(headers: json, body: "[\u{1}" + String(repeating: "1,", count: 400))
            case "/plist":
                return RecordingServer.Reply(headers: [("Content-Type", "application/x-plist")], body: """
                    <?xml version="1.0" encoding="UTF-8"?>
                    <plist version="1.0"><dict><key>id</key><integer>8</integer><key>displayName</key><string>Desk</string></dict></plist>
                    """)
            default: return RecordingServer.Reply(status: 500)
            }
        }
    }()

    func load(_ path: String) async throws -> Response {
        let service = DataLoaderService(graph: try compile("version: 1\n"), configuration: .testing())
        return try await service.makeFactory().makeLoader().load(Request(url: Self.server.url(path)))
    }

    @Test func aBodyDecodesWithTheDecoderTheCallerConfigures() async throws {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        #expect(try await load("/product").decode(Product.self, using: decoder) == Product(id: 7, displayName: "Lamp"))
        let product: Product = try await load("/plist").decode(using: PropertyListDecoder())
        #expect(product == Product(id: 8, displayName: "Desk"))
    }

    @Test func anErrorStatusIsRefusedWithTheServersAnswer() async throws {
        let response = try await load("/missing")
        #expect(throws: ResponseDecodingError.self) { try response.decode(Product.self) }
        do {
            _ = try response.decode(Product.self)
        } catch {
            #expect(error.reason == .status)
            #expect(error.status == 404)
            #expect(error.contentType == "text/html")
            #expect(error.bodyPrefix == Array("<h1>Not here</h1>".utf8))
            #expect(error.description.contains("Product"), "\(error)")
            #expect(error.description.contains("status 404, text/html, 17 bytes"), "\(error)")
            #expect(error.description.hasSuffix(#"the body begins "<h1>Not here</h1>""#), "\(error)")
        }
    }

    @Test func aChangedSchemaSaysWhatTheDecoderSaid() async throws {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        do {
            _ = try await load("/changed").decode(Product.self, using: decoder)
            Issue.record("decoded a string id as an Int")
        } catch let error as ResponseDecodingError {
            guard case .undecodable(let message) = error.reason else {
                Issue.record("reason \(error.reason)")
                return
            }
            #expect(message.contains("id"), "\(message)")
            #expect(error.status == 200)
            #expect(error.contentType == "application/json")
        }
    }

    @Test func aLongBodyIsCutToItsFirstBytesWithControlCharactersEscaped() async throws {
        do {
            _ = try await load("/long").decode([Int].self)
            Issue.record("decoded a broken array")
        } catch let error as ResponseDecodingError {
            #expect(error.bodyPrefix.count == ResponseDecodingError.prefixLimit)
            #expect(error.bodyLength == 802)
            #expect(error.description.hasSuffix("…"), "\(error)")
            #expect(!error.description.contains("\u{1}"))
            #expect(error.description.contains(#"the body begins "[\u{1}1,1,"#), "\(error)")
        }
    }
}
