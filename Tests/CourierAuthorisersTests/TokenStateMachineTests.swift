@testable import CourierAuthorisers
import CourierCore
import Testing

extension TokenStateMachine.AuthoriseAction: Equatable {
    static func == (a: Self, b: Self) -> Bool {
        switch (a, b) {
        case (.use(let x), .use(let y)): return x == y
        case (.wait(let x, let avoidX), .wait(let y, let avoidY)): return x == y && avoidX == avoidY
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

    /// A refused token is carried by the refresh it starts (a fleet's store must not hand it back), and by every
    /// retry after a failed refresh, until a refresh succeeds; an explicit refresh avoids the token it replaces.
    @Test func theRefreshAfterA401AvoidsTheRefusedToken() {
        var sm = TokenStateMachine<Int>(refreshMargin: 0)
        #expect(sm.authorise(now: 0, id: 1, waiter: 1) == .wait(startRefresh: true, avoiding: nil))
        _ = sm.refreshSucceeded(AccessToken(value: "a"))
        sm.authorisationFailed(tokenValue: "a")
        #expect(sm.authorise(now: 0, id: 2, waiter: 2) == .wait(startRefresh: true, avoiding: "a"))
        #expect(sm.authorise(now: 0, id: 3, waiter: 3) == .wait(startRefresh: false))
        #expect(sm.refreshFailed() == [2, 3])
        #expect(sm.authorise(now: 0, id: 4, waiter: 4) == .wait(startRefresh: true, avoiding: "a"))
        _ = sm.refreshSucceeded(AccessToken(value: "b"))
        #expect(sm.refresh(id: 5, waiter: 5) == .wait(startRefresh: true, avoiding: "b"))
        _ = sm.refreshSucceeded(AccessToken(value: "c", expiresAt: 10))
        // An expiry-driven refresh avoids nothing: the expiry margin already refuses the old token.
        #expect(sm.authorise(now: 20, id: 6, waiter: 6) == .wait(startRefresh: true, avoiding: nil))
    }
}
