@testable import CourierAuthorisers
import CourierCore
import Testing

extension TokenStateMachine.AuthoriseAction: Equatable {
    static func == (a: Self, b: Self) -> Bool {
        switch (a, b) {
        case (.use(let x), .use(let y)): return x == y
        case (.wait(let x), .wait(let y)): return x == y
        default: return false
        }
    }
}

/// Protocol traces of the token life cycle; waiters are plain numbers.
@Suite struct TokenStateMachineTests {
    @Test func singleFlightTrace() {
        var sm = TokenStateMachine<Int>(refreshMargin: 60)
        #expect(sm.authorise(now: 0, id: 1, waiter: 1) == .wait(startRefresh: true))  // no token: 1 starts the refresh
        #expect(sm.authorise(now: 0, id: 2, waiter: 2) == .wait(startRefresh: false))  // 2 joins it
        #expect(sm.refresh(id: 3, waiter: 3) == .wait(startRefresh: false))  // so does an explicit refresh
        let token = AccessToken(value: "a", expiresAt: 1000)
        #expect(sm.refreshSucceeded(token) == [1, 2, 3])
        #expect(sm.authorise(now: 939, id: 4, waiter: 4) == .use(token))
        #expect(sm.authorise(now: 940, id: 5, waiter: 5) == .wait(startRefresh: true))  // inside the 60 s margin
        #expect(sm.refreshFailed() == [5])
        #expect(sm.currentToken == nil)
        #expect(sm.authorise(now: 941, id: 6, waiter: 6) == .wait(startRefresh: true))  // a failure is not cached
    }

    @Test func authorisationFailedDropsOnlyTheTokenItNames() {
        var sm = TokenStateMachine<Int>(refreshMargin: 0)
        _ = sm.authorise(now: 0, id: 1, waiter: 1)
        _ = sm.refreshSucceeded(AccessToken(value: "new"))
        sm.authorisationFailed(tokenValue: "old")
        #expect(sm.currentToken?.value == "new")
        sm.authorisationFailed(tokenValue: "new")
        #expect(sm.currentToken == nil)
        // During a refresh a 401 changes nothing.
        _ = sm.authorise(now: 0, id: 2, waiter: 2)
        sm.authorisationFailed(tokenValue: "new")
        #expect(sm.isRefreshing)
    }

    @Test func cancelledWaitersLeaveTheRefresh() {
        var sm = TokenStateMachine<Int>(refreshMargin: 0)
        #expect(sm.authorise(now: 0, id: 1, waiter: 10) == .wait(startRefresh: true))
        #expect(sm.authorise(now: 0, id: 2, waiter: 20) == .wait(startRefresh: false))
        #expect(sm.cancel(id: 1) == 10)  // the starter leaves; the refresh goes on
        #expect(sm.cancel(id: 1) == nil)  // at most once
        #expect(sm.refreshSucceeded(AccessToken(value: "t")) == [20])
        #expect(sm.cancel(id: 2) == nil)  // nothing parked any more
    }
}
