import CourierCore
import CourierTestSupport
import Foundation
import Testing

/// `courier fetch` behaving as curl users expect: methods, request bodies, the User-Agent, header errors and
/// redirects (`-o` files are in ``FetchOutputFileTests``).
@Suite(.timeLimit(.minutes(1)), .onBlockingThreads) struct FetchCurlCompatibilityTests {
    @Test func standardMethodsAreUpperCasedAndOthersSentAsGiven() async throws {
        let server = try RecordingServer()
        defer { server.stop() }
        for (given, sent) in [("get", "GET"), ("Delete", "DELETE"), ("PATCH", "PATCH"), ("Purge", "Purge")] {
            let result = try await CourierProcess.run(["fetch", "-X", given, server.url("/m")])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(server.requests.last?.requestLine == "\(sent) /m HTTP/1.1")
        }
        let bad = try await CourierProcess.run(["fetch", "-X", "GE T", server.url("/m")])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("'GE T' is not a valid HTTP method"), "\(bad.stderr)")
        #expect(server.requests.count == 4)
    }

    @Test func dataIsSentAsCurlSendsIt() async throws {
        let server = try RecordingServer()
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        let form = try files.write("form.txt", "a=1\r\n&b=2\n")

        // -d @FILE: CR and LF removed; several -d joined with '&'; POST and curl's form Content-Type.
        let data = try await CourierProcess.run(["fetch", "-d", "@\(form)", "-d", "c=3\n", server.url("/d")])
        #expect(data.status == 0, "\(data.stderr)")
        let sent = try #require(server.requests.last)
        #expect(sent.requestLine == "POST /d HTTP/1.1")
        #expect(sent.bodyText == "a=1&b=2&c=3\n")
        #expect(sent.header("content-type") == "application/x-www-form-urlencoded")

        // --data-binary: the file's bytes as they are, with the same default Content-Type.
        _ = try await CourierProcess.run(["fetch", "--data-binary", "@\(form)", "--data-binary", "x", server.url("/b")])
        #expect(server.requests.last?.bodyText == "a=1\r\n&b=2\n&x")
        #expect(server.requests.last?.header("content-type") == "application/x-www-form-urlencoded")

        // A Content-Type from -H is the only one sent; -X keeps its method.
        _ = try await CourierProcess.run(["fetch", "-X", "PUT", "-H", "Content-Type: application/json", "-d", "{}", server.url("/j")])
        let json = try #require(server.requests.last)
        #expect(json.requestLine == "PUT /j HTTP/1.1")
        #expect(json.headerLines.filter { $0.lowercased().hasPrefix("content-type:") } == ["Content-Type: application/json"])
        // Without a body there is no Content-Type.
        _ = try await CourierProcess.run(["fetch", server.url("/g")])
        #expect(server.requests.last?.header("content-type") == nil)
        #expect(server.requests.count == 4)

        let mixed = try await CourierProcess.run(["fetch", "-d", "a", "--data-binary", "b", server.url("/x")])
        #expect(mixed.status == 2)
        #expect(server.requests.count == 4)
    }

    @Test func theUserAgentIsTheSameWithAndWithoutAPolicy() async throws {
        let server = try RecordingServer()
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        let policy = try files.write("policy.yaml", FetchTestFiles.sendOncePolicy)
        for extra in [[], ["--policy", policy]] {
            let plain = try await CourierProcess.run(["fetch"] + extra + [server.url("/ua")])
            #expect(plain.status == 0, "\(plain.stderr)")
            #expect(server.requests.last?.header("user-agent") == "courier/0.1.0", "\(extra)")
            _ = try await CourierProcess.run(["fetch", "-H", "User-Agent: mine/2"] + extra + [server.url("/ua")])
            let agents = server.requests.last?.headerLines.filter { $0.lowercased().hasPrefix("user-agent:") }
            #expect(agents == ["User-Agent: mine/2"], "\(extra)")
        }
    }

    @Test func badHeadersAreUsageErrorsNotPolicyErrors() async throws {
        let server = try RecordingServer()
        defer { server.stop() }
        for header in ["Bad Name: 1", "X-A: one\rtwo", ": empty name"] {
            let result = try await CourierProcess.run(["fetch", "-H", header, "--json-report", "-", server.url("/h")])
            #expect(result.status == 2, "\(header)")
            #expect(result.stderr.contains("-H"), "\(result.stderr)")
            #expect(!result.stderr.contains("policy:"), "\(result.stderr)")
        }
        #expect(server.requests.isEmpty)
    }

    @Test func maxRedirsZeroDeliversTheRedirect() async throws {
        let server = try RecordingServer { _, request in
            switch request.path {
            case "/hop2": RecordingServer.Reply(status: 302, headers: [("Location", "/hop1")], body: "to hop1")
            case "/hop1": RecordingServer.Reply(status: 301, headers: [("Location", "/end")], body: "to end")
            case "/nowhere": RecordingServer.Reply(status: 302, headers: [("Location", "")], body: "stay")
            default: RecordingServer.Reply(body: "end")
            }
        }
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        let policy = try files.write("policy.yaml", FetchTestFiles.sendOncePolicy)
        for extra in [[], ["--policy", policy]] {
            let before = server.requests.count
            let followed = try await CourierProcess.run(["fetch"] + extra + [server.url("/hop2")])
            #expect(followed.status == 0, "\(followed.stderr)")
            #expect(followed.stdout == "end")

            let none = try await CourierProcess.run(["fetch", "--max-redirs", "0", "-i", "--json-report", "-"] + extra + [server.url("/hop2")])
            #expect(none.status == 0, "\(none.stderr)")
            #expect(none.stdout.hasPrefix("HTTP/1.1 302"), "\(none.stdout)")
            #expect(none.stdout.hasSuffix("to hop1"))
            #expect(try FetchTestFiles.reports(none.stderr).first?["redirects"] as? Int == 0)

            let one = try await CourierProcess.run(["fetch", "--max-redirs", "1"] + extra + [server.url("/hop2")])
            #expect(one.status == 47, "\(extra): \(one.stderr)")

            // An empty Location is the answer, as with curl.
            let nowhere = try await CourierProcess.run(["fetch"] + extra + [server.url("/nowhere")])
            #expect(nowhere.status == 0, "\(nowhere.stderr)")
            #expect(nowhere.stdout == "stay")
            #expect(server.requests.count - before == 3 + 1 + 2 + 1, "\(extra)")
        }
        let negative = try await CourierProcess.run(["fetch", "--max-redirs", "-1", server.url("/end")])
        #expect(negative.status == 2)
        #expect(negative.stderr.contains("--max-redirs takes 0 or more, not -1"), "\(negative.stderr)")
    }

    @Test func anAuthorisedRouteFollowsTheSameRedirectLimit() async throws {
        let server = try RecordingServer { _, request in
            request.path == "/hop" ? RecordingServer.Reply(status: 307, headers: [("Location", "/end")], body: "to end") : RecordingServer.Reply(body: "end")
        }
        defer { server.stop() }
        let files = try FetchTestFiles()
        defer { files.remove() }
        let policy = try files.write("policy.yaml", """
            version: 1
            authorisers:
              bearer:
                plugin: static-bearer
                settings: { token: "t" }
                allow-plain-http: true
            services:
              local:
                hosts: [127.0.0.1]
                scheme: http
                authoriser: bearer
                retry: { max-attempts: 1 }
            """)
        let none = try await CourierProcess.run(["fetch", "--policy", policy, "--max-redirs", "0", server.url("/hop")])
        #expect(none.status == 0, "\(none.stderr)")
        #expect(none.stdout == "to end")
        let followed = try await CourierProcess.run(["fetch", "--policy", policy, "--max-redirs", "1", server.url("/hop")])
        #expect(followed.stdout == "end", "\(followed.stderr)")
        #expect(server.requests.map(\.path) == ["/hop", "/hop", "/end"])
    }

    @Test func headerOptionsRemoveOrEmptyAFieldAsInCurl() async throws {
        let server = try RecordingServer()
        defer { server.stop() }
        // 'Name:' sends no Name, not even the ones courier adds; 'Name;' sends it empty; -L is accepted.
        let result = try await CourierProcess.run([
            "fetch", "-L", "-H", "User-Agent:", "-H", "Accept-Encoding:", "-H", "Content-Type:", "-H", "X-Empty;",
            "-d", "a=1", server.url("/h"),
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let request = try #require(server.requests.last)
        #expect(request.header("User-Agent") == nil)
        #expect(request.header("Accept-Encoding") == nil)
        #expect(request.header("Content-Type") == nil)
        #expect(request.header("X-Empty") == "")
        #expect(request.bodyText == "a=1")
        // Without them, courier's own fields are there.
        let plain = try await CourierProcess.run(["fetch", "-d", "a=1", server.url("/h")])
        #expect(plain.status == 0)
        let again = try #require(server.requests.last)
        #expect(again.header("User-Agent")?.hasPrefix("courier/") == true)
        #expect(again.header("Accept-Encoding") != nil)
        #expect(again.header("Content-Type") == "application/x-www-form-urlencoded")
    }
}
