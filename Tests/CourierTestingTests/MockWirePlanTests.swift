import CourierCore
@testable import CourierTesting
import Testing

/// What a scripted response becomes on the wire, without a socket.
@Suite struct MockWirePlanTests {
    func sent(_ plan: MockWirePlan) -> String {
        String(decoding: plan.steps.flatMap { step -> [UInt8] in
            if case .send(let bytes) = step { return bytes }
            return []
        }, as: UTF8.self)
    }

    @Test func aWholeBodyGoesWithItsLength() {
        let plan = MockWirePlan(.text("hi"), headOnly: false, keepAlive: true)
        #expect(sent(plan) == "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 2\r\n\r\nhi")
        #expect(!plan.closes)
        #expect(plan.totalWait == .zero)
    }

    @Test func chunksAreFramedAndPausedBetween() {
        let plan = MockWirePlan(.chunked(["ab", "", "cde"], delayBetweenChunks: .milliseconds(100)), headOnly: false, keepAlive: true)
        #expect(plan.steps.count == 3)
        #expect(plan.steps[1] == .wait(.milliseconds(100)))
        #expect(sent(plan).hasSuffix("Transfer-Encoding: chunked\r\n\r\n2\r\nab\r\n3\r\ncde\r\n0\r\n\r\n"))
    }

    @Test func throttlingSpreadsTheBodyOverTime() {
        let body = [UInt8](repeating: 7, count: 1000)
        let plan = MockWirePlan(MockResponse(body: body).throttled(bytesPerSecond: 500), headOnly: false, keepAlive: true)
        // 40 slices of 25 bytes, a wait of 50 ms before each but the first.
        #expect(plan.totalWait == .milliseconds(39 * 50))
        #expect(plan.bodyBytesSent == 1000)
        #expect(sent(plan).utf8.count == 1000 + sent(MockWirePlan(MockResponse(body: body), headOnly: true, keepAlive: true)).utf8.count)
    }

    @Test func aCutBodySendsExactlyThatManyBytesAndCloses() {
        let plan = MockWirePlan(MockResponse(body: "0123456789").disconnecting(afterBodyBytes: 4), headOnly: false, keepAlive: true)
        #expect(plan.closes)
        #expect(plan.bodyBytesSent == 4)
        #expect(sent(plan).hasSuffix("Content-Length: 10\r\n\r\n0123"))
        let chunked = MockWirePlan(MockResponse.chunked(["abc", "def"]).disconnecting(afterBodyBytes: 4), headOnly: false, keepAlive: true)
        #expect(sent(chunked).hasSuffix("3\r\nabc\r\n3\r\nd"))
    }

    @Test func aHeadRequestGetsTheHeadOnlyAndCloseIsAnnounced() {
        let plan = MockWirePlan(MockResponse(body: "abc"), headOnly: true, keepAlive: false)
        #expect(sent(plan) == "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\n")
        #expect(plan.closes)
    }

    @Test func aScriptTooSlowOrMalformedIsRefused() async throws {
        let slow = MockResponse(body: [UInt8](repeating: 0, count: 100)).throttled(bytesPerSecond: 1)
        #expect(slow.problem(maxDelay: .seconds(30)) != nil)
        #expect(MockResponse.status(99).problem(maxDelay: .seconds(1)) != nil)
        #expect(MockResponse(headers: ["Bad Name": "x"]).problem(maxDelay: .seconds(1)) != nil)
        #expect(MockResponse().delayed(by: .seconds(-1)).problem(maxDelay: .seconds(1)) != nil)
        #expect(MockResponse.tooManyRequests(retryAfter: 2).problem(maxDelay: .seconds(1)) == nil)
        try await withMockServer { server in
            #expect(throws: MockServerError.self) { try server.enqueue(slow) }
            #expect(server.pendingResponses == 0)
        }
    }
}
