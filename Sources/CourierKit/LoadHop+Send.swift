internal import CourierCore
internal import CourierTransport

extension LoadHop {
    /// One attempt: the URL's own host, then its fallbacks in order, skipping targets that are cooling down after
    /// a failure (`FallbackSelection`). Only a resolve or connect failure moves on to the next target.
    @inline(never)
    nonisolated(nonsending) mutating func send(attempt: Int) async -> Result<LoadAnswer, CourierError> {
        // The authorised request's URL and fields, else the hop's own (the authorised request is looked at only on
        // a route with an authoriser: reading an optional that large copies it whole).
        let sendHeaders = hasAuthoriser ? authorised?.headers ?? headers : headers
        // The fields and wall-clock instants are the cache's (RFC 9111's request and response times) only.
        if stage != nil { (sentHeaders, sentAt) = (sendHeaders, service.wallClock()) }
        let service = self.service
        let selection = FallbackSelection(host: url.host, port: url.port, fallbacks: route.fallbacks) {
            service.isCoolingDown($0, now: service.now())
        }
        for label in selection.skipped { execution.trace(attempt, .coolingDown(target: label)) }
        // The proxy (the request's, explicit, the route's policy, the environment); a fallback host is the origin its
        // tunnel names.
        var proxy = execution.request.proxy
        if proxy == nil {
            do throws(CourierError) {
                proxy = try service.proxyDecision(for: url, route: route)?.proxy
            } catch {
                return .failure(error)
            }
        }
        // The selection always holds at least the URL's own host; `last` is set before the loop can end.
        var last: CourierError?
        for target in selection.candidates {
            guard service.now() < deadline else {
                return .failure(CourierError(.timeout, "the total deadline passed", url: requestURL))
            }
            tried.append(target.label)
            execution.trace(attempt, .connecting(target: target.label, fallback: target.address != nil))
            let outgoing: HTTPRequest
            do throws(CourierError) {
                outgoing = try outgoingRequest(to: target, headers: sendHeaders, proxy: proxy)
            } catch {
                return .failure(error)
            }
            do {
                // The load's one deadline, as it was made when the load started: the transport takes it unchanged
                // (on a manual clock, what is left of it, in real time: a socket's timeouts cannot be advanced).
                let exchange = try await service.client.exchange(outgoing, deadline: service.realDeadline(deadline))
                service.markWorking(target.label)
                if stage != nil { answeredAt = service.wallClock() }
                return .success(LoadAnswer(exchange))
            } catch {
                last = error
                guard error.targetUnreachable else { return .failure(error) }
                execution.trace(attempt, .unreachable(target: target.label, error: error))
                service.markFailed(target.label, now: service.now())
            }
        }
        return .failure(last ?? CourierError(.connect, "no connect target", url: requestURL))
    }
}
