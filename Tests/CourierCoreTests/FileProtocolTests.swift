@testable import CourierCore
import Foundation
import Testing

/// ``FileProtocol`` against a real directory: whole files, every kind of range, 416, HEAD, directories, missing files,
/// and escapes from the root through `..` and through a symbolic link, refused.
@Suite struct FileProtocolTests {
    /// A temporary root with `hello.txt` (`0123456789`), an empty file, a sub-directory, a secret next to the root and
    /// a link inside the root pointing at it.
    final class Tree {
        let base = NSTemporaryDirectory() + "courier-file-\(UUID().uuidString)"
        var root: String { base + "/root" }
        init() throws {
            let manager = FileManager.default
            try manager.createDirectory(atPath: root + "/sub", withIntermediateDirectories: true)
            try "0123456789".write(toFile: root + "/hello.txt", atomically: true, encoding: .utf8)
            try "".write(toFile: root + "/empty.bin", atomically: true, encoding: .utf8)
            try "top secret".write(toFile: base + "/secret.txt", atomically: true, encoding: .utf8)
            try manager.createSymbolicLink(atPath: root + "/link.txt", withDestinationPath: base + "/secret.txt")
            try manager.createSymbolicLink(atPath: root + "/inside.txt", withDestinationPath: root + "/hello.txt")
        }
        deinit { try? FileManager.default.removeItem(atPath: base) }

        func url(_ path: String) throws -> HTTPURL { try #require(HTTPURL(anyScheme: "file://" + path)) }
    }

    func get(_ plugin: FileProtocol, _ url: HTTPURL, range: String? = nil, method: HTTPMethod = .get) async throws -> (ProtocolResponse, [UInt8]) {
        var headers = HTTPHeaders()
        if let range { headers.add(name: "Range", value: range) }
        let response = try await plugin.respond(to: ProtocolRequest(method: method, url: url, headers: headers))
        return (response, try await response.body.collect(upTo: 1 << 20))
    }

    @Test func aWholeFileWithItsHead() async throws {
        let tree = try Tree()
        let plugin = FileProtocol(root: tree.root)
        let (response, body) = try await get(plugin, try tree.url(tree.root + "/hello.txt"))
        #expect(response.status == 200)
        #expect(body == Array("0123456789".utf8))
        #expect(response.headers["content-length"] == "10")
        #expect(response.headers["content-type"] == "text/plain")
        #expect(response.headers["accept-ranges"] == "bytes")
        #expect(response.headers["last-modified"] != nil)
        let (head, headBody) = try await get(plugin, try tree.url(tree.root + "/hello.txt"), method: .head)
        #expect(head.headers["content-length"] == "10")
        #expect(headBody.isEmpty)
        let (empty, emptyBody) = try await get(plugin, try tree.url(tree.root + "/empty.bin"))
        #expect(empty.status == 200)
        #expect(empty.headers["content-type"] == "application/octet-stream")
        #expect(emptyBody.isEmpty)
        // Percent-encoding, `localhost` and a link that stays inside the root.
        #expect(try await get(plugin, try tree.url("localhost" + tree.root + "/hell%6F.txt")).1 == body)
        #expect(try await get(plugin, try tree.url(tree.root + "/inside.txt")).1 == body)
        #expect(try await get(plugin, try tree.url(tree.root + "/sub/../hello.txt")).1 == body)
        let (post, _) = try await get(plugin, try tree.url(tree.root + "/hello.txt"), method: .post)
        #expect(post.status == 405)
    }

    @Test func rangesFirstSuffixOpenEndedAndUnsatisfiable() async throws {
        let tree = try Tree()
        let plugin = FileProtocol(root: tree.root)
        let url = try tree.url(tree.root + "/hello.txt")
        let expectations: [(String, String, String)] = [
            ("bytes=0-3", "0123", "bytes 0-3/10"),
            ("bytes=-4", "6789", "bytes 6-9/10"),
            ("bytes=7-", "789", "bytes 7-9/10"),
            ("bytes=8-100", "89", "bytes 8-9/10"),
        ]
        for (range, text, contentRange) in expectations {
            let (response, body) = try await get(plugin, url, range: range)
            #expect(response.status == 206, "\(range)")
            #expect(String(decoding: body, as: UTF8.self) == text, "\(range)")
            #expect(response.headers["content-range"] == contentRange, "\(range)")
            #expect(response.headers["content-length"] == String(text.count), "\(range)")
        }
        let (refused, body) = try await get(plugin, url, range: "bytes=10-")
        #expect(refused.status == 416)
        #expect(refused.headers["content-range"] == "bytes */10")
        #expect(body.isEmpty)
        let (several, whole) = try await get(plugin, url, range: "bytes=0-1,4-5")
        #expect(several.status == 200)
        #expect(whole.count == 10)
    }

    @Test func directoriesMissingFilesAndOtherHostsAreErrors() async throws {
        let tree = try Tree()
        let plugin = FileProtocol(root: tree.root)
        for (path, words) in [(tree.root + "/sub", "is a directory"), (tree.root, "is a directory"), (tree.root + "/nope.txt", "no such file")] {
            do {
                _ = try await get(plugin, try tree.url(path))
                Issue.record("\(path) was answered")
            } catch let error as ProtocolPluginError {
                #expect(error.message.contains(words), "\(path): \(error.message)")
            }
        }
        await #expect(throws: ProtocolPluginError.self) { try await get(plugin, try #require(HTTPURL(anyScheme: "file://example.com/etc/hosts"))) }
    }

    @Test func escapesThroughDotDotAndThroughALinkAreRefused() async throws {
        let tree = try Tree()
        let plugin = FileProtocol(root: tree.root)
        let attempts = [
            tree.root + "/../secret.txt", tree.root + "/sub/../../secret.txt", tree.root + "/%2E%2E/secret.txt",
            tree.root + "/link.txt", tree.base + "/secret.txt", "/etc/hosts", tree.root + "/../nonexistent",
        ]
        for path in attempts {
            do {
                let (_, body) = try await get(plugin, try tree.url(path))
                Issue.record("\(path) was read: \(String(decoding: body, as: UTF8.self))")
            } catch let error as ProtocolPluginError {
                #expect(error.message.contains("outside"), "\(path): \(error.message)")
            }
        }
        // A root given with a trailing slash or dots is the same root.
        let (_, body) = try await get(FileProtocol(root: tree.root + "/sub/../"), try tree.url(tree.root + "/hello.txt"))
        #expect(body.count == 10)
        // A sibling whose name starts with the root's is not under it.
        try "x".write(toFile: tree.root + "2.txt", atomically: true, encoding: .utf8)
        await #expect(throws: ProtocolPluginError.self) { try await get(plugin, try tree.url(tree.root + "2.txt")) }
    }
}
