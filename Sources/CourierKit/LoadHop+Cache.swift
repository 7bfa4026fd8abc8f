internal import CourierCore
internal import CourierHTTP1
internal import CourierHTTPCache
internal import CourierTransport

/// The hop's steps for its cache stage (RFC 9111, `CacheStage`): the lookup before the first attempt, storing,
/// freshening with a 304, invalidating after an unsafe method, and answering from a stored response. Apart from the
/// network steps because a plain load takes none of them.
extension LoadHop {
    /// Looks the request up in the cache stage: what is stored for it, judged (nil: nothing, or the cache failed).
    @inline(never)
    nonisolated(nonsending) mutating func lookUp() async -> (LoadCacheFinding, LoadStored)? {
        guard let stage else { return nil }
        do {
            guard let (lookup, finding) = try await stage.lookUp(
                method: method, url: url, headers: headers, revalidating: execution.revalidation, removedCorrupt: &removedCorrupt
            ) else { return nil }
            return (finding, LoadStored(lookup))
        } catch {
            execution.trace(0, .cache(.failed(error: error)))
            return nil
        }
    }

    /// Invalidates the stored responses of the URL with an unsafe method's response.
    @inline(never)
    nonisolated(nonsending) func invalidate(with answer: LoadAnswer) async {
        let head = answer.exchange.head
        if let stage, let event = await stage.invalidate(method: method, url: url, status: head.status, headers: head.headers) {
            execution.trace(machine.attempt, .cache(event))
        }
    }

    /// RFC 9111 §5.2.1.7: only-if-cached and nothing usable stored: the answer is a 504.
    @inline(never)
    mutating func answerUnsatisfiable() -> Response {
        timeline.doneAt = service.now()
        return Response(
            status: 504, reason: "Gateway Timeout", headers: HTTPHeaders(), body: [], url: url, attempts: 0,
            retryAfter: nil, addressesTried: [], timeline: timeline, bytesSent: 0, bytesReceived: 0, redirects: 0,
            userInfo: userInfo, cache: cacheStatus
        )
    }

    /// Stores an answer whose body is `body` over the stored response found (if any), when RFC 9111 allows.
    @inline(never)
    nonisolated(nonsending) func store(_ head: HTTPResponseHead, body: [UInt8], over found: LoadStored?) async {
        guard let stage else { return }
        let event = await stage.store(
            method: method, url: url, requestHeaders: sentHeaders, status: head.status, reason: head.reason,
            headers: head.headers, body: body, requestTime: sentAt, responseTime: answeredAt, found: found?.lookup
        )
        execution.trace(machine.attempt, .cache(event))
    }

    /// Drops the 304 (`notModified`)'s body and freshens the stored response with it: the stored response as the
    /// 304 freshens it; as it was when the record could not be rewritten (it still answers); nil when the 304 does
    /// not match it.
    @inline(never)
    nonisolated(nonsending) func freshen(
        _ stored: LoadStored, from notModified: LoadAnswer, _ counters: inout RequestExecution.Counters
    ) async -> LoadStored? {
        counters.count(await notModified.drain())
        let lookup = stored.lookup
        guard let stage else { return stored }
        do {
            guard let fresh = try await stage.freshen(
                lookup, headers: notModified.exchange.headers, requestTime: sentAt, responseTime: answeredAt
            ) else { return nil }
            var freshened = lookup
            freshened.stored = fresh
            return LoadStored(freshened)
        } catch {
            execution.trace(machine.attempt, .cache(.failed(error: error)))
            return stored
        }
    }

    /// The answer from a stored response (fresh, stale or revalidated), to the caller or its stream.
    @inline(never)
    nonisolated(nonsending) mutating func answer(
        _ found: LoadStored, as kind: LoadStoredAnswer, _ counters: inout RequestExecution.Counters
    ) async throws(CourierError) -> Response {
        let lookup = found.lookup
        counters.status = lookup.stored.status
        let stored = lookup.stored
        let event: CacheEvent
        switch kind {
        case .hit: (event, cacheStatus) = (.hit, .hit)
        case .stale(let why): (event, cacheStatus) = (.stale(why: why), .stale)
        case .revalidated: (event, cacheStatus) = (.revalidated, .revalidated)
        }
        execution.trace(machine.attempt, .cache(event))
        // A hit or a stale answer is as old as the lookup found it; a revalidated one was just freshened.
        let fields = stage?.answerHeaders(stored, age: kind == .revalidated ? nil : lookup.freshness.currentAge) ?? stored.headers
        let body = method == .head ? [] : stored.body
        // The stored URL is the request's own but for a redirect target's (each hop is looked up apart).
        let answerURL = stored.url == requestURL ? url : HTTPURL(stored.url) ?? url
        let head = ResponseHead(status: stored.status, reason: stored.reason, headers: fields, url: answerURL, attempt: machine.attempt)
        try await execution.events?.deliverStored(head, body: body)
        timeline.doneAt = service.now()
        var response = Response(
            status: stored.status, reason: stored.reason, headers: fields, body: body, url: answerURL,
            attempts: machine.attempt, retryAfter: machine.retryAfter, addressesTried: tried, timeline: timeline,
            bytesSent: counters.sent, bytesReceived: counters.received, redirects: counters.redirects,
            userInfo: userInfo, cache: cacheStatus
        )
        response.report = counters.report
        return response
    }
}
