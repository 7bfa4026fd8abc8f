import CourierCore
import CourierTestSupport
import Testing

@testable import CourierKit

/// Resumed downloads as traces of the load's machine: a streamed `GET` whose body breaks off is retried asking for
/// the rest (`Range`, `If-Range`); a matching `206` continues the body, anything else restarts it, a mismatched one is
/// a protocol error. No server, no clock.
@Suite struct LoadStateMachineResumeTests {
    typealias Machine = LoadStateMachine<String, String, String, String>

    let t0 = Deadline.now()
    let strong: HTTPHeaders = ["Content-Length": "1000", "ETag": "\"v1\""]

    func machine(resumes: Bool = true) -> Machine {
        var p = RetryPolicy.builtIn
        p.conditions = [.status(503), .connectError, .connectionLost, .timeout]
        p.backoff = BackoffPolicy(initial: .milliseconds(100), max: .seconds(1), multiplier: 2, jitter: .none)
        p.budget = nil
        return Machine(retry: p, maxAttempts: 5, retriesAllowed: true, deadline: t0 + .seconds(60), hasAuthoriser: false, resumes: resumes)
    }

    /// Starts `m`, delivers a 200 with `headers`, and breaks its body after `delivered` bytes: the actions of the break.
    func breakFirstBody(_ m: inout Machine, headers: HTTPHeaders, delivered: Int64) -> Machine.Actions {
        var random = SplitMix64(seed: 1)
        _ = m.start()
        _ = m.admitted(at: t0, now: t0)
        #expect(m.responseArrived("r200", status: 200, retryAfter: nil, redirect: nil, headers: headers, now: t0, using: &random)
            == [.deliver("r200", store: false, stored: nil)])
        return m.failed(
            "lost", condition: .connectionLost, kind: .protocol, cancelled: false, handedOver: true, delivered: delivered,
            reason: "protocol: the connection closed", now: t0, using: &random
        )
    }

    /// Breaks the first (strong, 1000-byte) body after 400 bytes and brings the granted retry to its send.
    func retryAfterBreaking(_ m: inout Machine) {
        _ = breakFirstBody(&m, headers: strong, delivered: 400)
        _ = m.budget(granted: true, now: t0)
        sendNext(&m)
    }

    /// The retry wait is over and the next attempt is admitted at once.
    func sendNext(_ m: inout Machine) {
        _ = m.retryWaited()
        _ = m.admitted(at: t0, now: t0)
    }

    /// The body being delivered breaks off after `delivered` more bytes: the actions.
    func breakAgain(_ m: inout Machine, delivered: Int64, using random: inout SplitMix64) -> Machine.Actions {
        m.failed(
            "lost", condition: .connectionLost, kind: .protocol, cancelled: false, handedOver: true, delivered: delivered,
            reason: "reset", now: t0, using: &random
        )
    }

    func range(_ offset: Int64, _ validator: String = "\"v1\"", length: Int64? = 1000) -> ResumeRange {
        ResumeRange(offset: offset, anchor: ResumeAnchor(validator: validator, length: length))
    }

    @Test func aBodyThatBreaksOffIsRetriedAskingForTheRestAndA206ContinuesIt() {
        var m = machine()
        var random = SplitMix64(seed: 1)
        #expect(breakFirstBody(&m, headers: strong, delivered: 400)
            == [.askForRange(range(400)), .proposeRetry(at: t0 + .milliseconds(100), reason: "protocol: the connection closed")])
        // The consumer is not told of a restart: the answer says what happened.
        #expect(m.budget(granted: true, now: t0)
            == [.waitForRetry(until: t0 + .milliseconds(100), reason: "protocol: the connection closed", announce: false)])
        #expect(m.retryWaited() == [.admit])
        #expect(m.admitted(at: t0, now: t0) == [.send(attempt: 2)])
        #expect(m.responseArrived(
            "r206", status: 206, retryAfter: nil, redirect: nil, headers: ["Content-Range": "bytes 400-999/1000"], now: t0, using: &random
        ) == [.continueBody("r206", head: "r200", from: 400, reason: "protocol: the connection closed")])
        // The continuation breaks too: the next range starts after both parts.
        #expect(breakAgain(&m, delivered: 250, using: &random) == [.askForRange(range(650)), .proposeRetry(at: t0 + .milliseconds(200), reason: "reset")])
    }

    @Test func a200ToTheRangeRequestRestartsTheBodyAndTellsTheConsumer() {
        var m = machine()
        var random = SplitMix64(seed: 1)
        retryAfterBreaking(&m)
        #expect(m.responseArrived("r200b", status: 200, retryAfter: nil, redirect: nil, headers: strong, now: t0, using: &random) == [
            .askForRange(nil), .announceRestart(attempt: 2, reason: "status 200: the server sent the whole body again"),
            .deliver("r200b", store: false, stored: nil),
        ])
        // The restarted body may be resumed in turn, from its own first byte.
        #expect(breakAgain(&m, delivered: 10, using: &random).elements.first == .askForRange(range(10)))
    }

    @Test func aRetriedStatusOnTheRangeRequestKeepsAskingAndOneThatIsFinalRestarts() {
        var m = machine()
        var random = SplitMix64(seed: 1)
        retryAfterBreaking(&m)
        _ = m.responseArrived("r503", status: 503, retryAfter: nil, redirect: nil, headers: [:], now: t0, using: &random)
        #expect(m.budget(granted: true, now: t0).last
            == .waitForRetry(until: t0 + .milliseconds(200), reason: "status 503", announce: false))
        sendNext(&m)
        _ = m.responseArrived("r503", status: 503, retryAfter: nil, redirect: nil, headers: [:], now: t0, using: &random)
        #expect(m.budget(granted: false, now: t0) == [
            .gaveUp(reason: "status 503", why: .budgetExhausted), .askForRange(nil),
            .announceRestart(attempt: 3, reason: "status 503 instead of the rest of the body"), .deliver("r503", store: false, stored: nil),
        ])
    }

    @Test func aMismatchedContentRangeIsAProtocolError() {
        for (field, why) in [
            ("bytes 300-999/1000", "does not start at byte 400"),
            ("bytes 400-1999/2000", "2000-byte representation"),
            ("bytes 400-899/1000", "does not run to the end"),
            ("bytes 400-999", "is not bytes first-last/length"),
        ] {
            var m = machine()
            var random = SplitMix64(seed: 1)
            retryAfterBreaking(&m)
            let actions = m.responseArrived(
                "r206", status: 206, retryAfter: nil, redirect: nil, headers: ["Content-Range": field], now: t0, using: &random
            )
            guard case .failResume("r206", let message)? = actions.elements.first, actions.elements.count == 1 else {
                Issue.record("\(field): \(actions)")
                continue
            }
            #expect(message.contains(why), "\(field): \(message)")
        }
    }

    @Test func withoutAStrongValidatorOrWithAContentCodingTheBodyRestarts() {
        let unresumable: [HTTPHeaders] = [
            ["Content-Length": "1000", "ETag": "W/\"v1\""],
            ["Content-Length": "1000", "ETag": "W/\"v1\"", "Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT", "Date": "Sun, 06 Nov 1994 09:49:37 GMT"],
            ["Content-Length": "1000", "Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT", "Date": "Sun, 06 Nov 1994 08:49:37 GMT"],
            ["Content-Length": "1000", "Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT"],
            ["Content-Length": "1000"],
            ["Content-Length": "1000", "ETag": "\"v1\"", "Content-Encoding": "gzip"],
            ["Content-Length": "1000", "ETag": "\"v1\"", "Accept-Ranges": "none"],
        ]
        for headers in unresumable {
            var m = machine()
            #expect(breakFirstBody(&m, headers: headers, delivered: 400)
                == [.proposeRetry(at: t0 + .milliseconds(100), reason: "protocol: the connection closed")], "\(headers)")
            #expect(m.budget(granted: true, now: t0).last
                == .waitForRetry(until: t0 + .milliseconds(100), reason: "protocol: the connection closed", announce: true))
        }
        // A Last-Modified a second or more older than Date is strong enough.
        var dated = machine()
        let lastModified = "Sun, 06 Nov 1994 08:49:37 GMT"
        #expect(breakFirstBody(&dated, headers: ["Last-Modified": lastModified, "Date": "Sun, 06 Nov 1994 08:49:38 GMT"], delivered: 5)
            .elements.first == .askForRange(range(5, lastModified, length: nil)))
        #expect(range(5, lastModified).fields.map { "\($0.name): \($0.value)" } == ["Range: bytes=5-", "If-Range: \(lastModified)"])
    }

    @Test func nothingDeliveredOrAWholeBodyLoadRestartsAsBefore() {
        var none = machine()
        #expect(breakFirstBody(&none, headers: strong, delivered: 0) == [.proposeRetry(at: t0 + .milliseconds(100), reason: "protocol: the connection closed")])
        var whole = machine(resumes: false)
        #expect(breakFirstBody(&whole, headers: strong, delivered: 400) == [.proposeRetry(at: t0 + .milliseconds(100), reason: "protocol: the connection closed")])
    }

    @Test func aConnectFailureOfTheRangeRequestIsRetriedAskingForTheSameRest() {
        var m = machine()
        var random = SplitMix64(seed: 1)
        retryAfterBreaking(&m)
        #expect(m.failed("refused", condition: .connectError, kind: .connect, cancelled: false, reason: "connect", now: t0, using: &random)
            == [.proposeRetry(at: t0 + .milliseconds(200), reason: "connect")])
        #expect(m.budget(granted: true, now: t0) == [.waitForRetry(until: t0 + .milliseconds(200), reason: "connect", announce: false)])
        sendNext(&m)
        #expect(m.responseArrived(
            "r206", status: 206, retryAfter: nil, redirect: nil, headers: ["Content-Range": "bytes 400-999/1000"], now: t0, using: &random
        ) == [.continueBody("r206", head: "r200", from: 400, reason: "protocol: the connection closed")])
    }

    @Test func contentRangeParsesSatisfiedByteRangesOnly() {
        #expect(ContentRange("bytes 0-9/10") == ContentRange(first: 0, last: 9, complete: 10))
        #expect(ContentRange(" bytes 5-9/* ") == ContentRange(first: 5, last: 9, complete: nil))
        for bad in ["bytes */10", "bytes 9-5/10", "bytes 0-10/10", "items 0-1/2", "bytes -1-5/10", "bytes 0-5/x", ""] {
            #expect(ContentRange(bad) == nil, "\(bad)")
        }
    }
}
