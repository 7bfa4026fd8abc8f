internal import CourierCore
internal import Synchronization

/// The script both of the kit's peers answer from, ``MockServer`` over sockets and ``ScriptedTransport`` with none:
/// routes, the queue of responses, and the record of requests and problems. Safe to use from any task.
///
/// A request is answered by the last route installed that matches it (method, path or `*`, and the host when the
/// route names one), else by the oldest queued response, else with `404` and a body saying no script answered,
/// noted in ``problems``. A response a route returns that cannot be sent is answered with `500` and noted.
package final class MockScript: Sendable {
    private struct State {
        var routes: [MockRoute] = []
        var queue: [MockResponse] = []
        var requests: [MockRequest] = []
        var problems: [String] = []
    }

    /// The cap on a response's waits added together.
    package let maxDelay: Duration
    /// The peer's name in the bodies and problems it writes (`MockServer`, `ScriptedTransport`).
    private let name: String
    private let state = Mutex(State())

    package init(name: String, maxDelay: Duration) {
        self.name = name
        self.maxDelay = maxDelay
    }

    /// Queues `response` for the next request no route answers.
    package func enqueue(_ response: MockResponse) throws(MockServerError) {
        if let problem = response.problem(maxDelay: maxDelay) {
            throw MockServerError(.invalidScript, problem)
        }
        state.withLock { $0.queue.append(response) }
    }

    package func on(_ route: MockRoute) {
        state.withLock { $0.routes.append(route) }
    }

    /// A handler that calls `handler` for requests with `Authorization: Bearer <token>` and answers the others
    /// with ``MockResponse/unauthorized(challenge:)``.
    package static func requiring(
        bearerToken token: String, _ handler: @escaping @Sendable (MockRequest) -> MockResponse
    ) -> @Sendable (MockRequest) -> MockResponse {
        { request in request.headers["authorization"] == "Bearer \(token)" ? handler(request) : .unauthorized() }
    }

    package var pendingResponses: Int { state.withLock { $0.queue.count } }
    package var requests: [MockRequest] { state.withLock { $0.requests } }
    package var problems: [String] { state.withLock { $0.problems } }

    /// Returns once `count` requests in all have been recorded; a `timedOut` error if they have not after
    /// `timeout` of real time. It looks every millisecond: a test's helper, not a hot path.
    package func waitForRequests(_ count: Int, timeout: Duration) async throws(MockServerError) {
        let start = ContinuousClock.now
        while true {
            let seen = state.withLock { $0.requests.count }
            if seen >= count { return }
            if ContinuousClock.now - start >= timeout {
                throw MockServerError(.timedOut, "\(name) saw \(seen) request\(seen == 1 ? "" : "s") in \(timeout), not the \(count) waited for")
            }
            // A cancelled wait ends as a timeout would: the test asked for requests that may never come.
            if (try? await Task.sleep(for: .milliseconds(1))) == nil {
                throw MockServerError(.timedOut, "\(name): the wait for \(count) requests was cancelled after \(seen)")
            }
        }
    }

    package func note(_ problem: String) {
        state.withLock { $0.problems.append(problem) }
    }

    /// Records `request` and picks its response; `numbered`: its ``MockRequest/indexOnConnection`` becomes its
    /// place among every request recorded (a peer with no connections).
    package func answer(_ request: MockRequest, numbered: Bool = false) -> MockResponse {
        var request = request
        let (route, queued) = state.withLock { state -> (MockRoute?, MockResponse?) in
            if numbered { request.indexOnConnection = state.requests.count }
            state.requests.append(request)
            if let route = state.routes.last(where: { $0.matches(request) }) { return (route, nil) }
            return (nil, state.queue.isEmpty ? nil : state.queue.removeFirst())
        }
        if let route {
            let response = route.handler(request)
            if let problem = response.problem(maxDelay: maxDelay) {
                note("\(request.method) \(request.path): the route's response cannot be sent: \(problem)")
                return .text("\(name): the route's response cannot be sent: \(problem)\n", status: 500)
            }
            return response
        }
        if let queued { return queued }
        note("\(request.method) \(request.path): no route and no queued response")
        return .text("\(name): no route and no queued response for \(request.method) \(request.path)\n", status: 404)
    }
}
