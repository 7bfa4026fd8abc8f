internal import CourierCore
internal import CourierTransport

extension LoadHop {
    /// The request one attempt sends to `target` (the URL's own host, or a fallback address): the authorised URL and
    /// `headers`, the body made again for this attempt (a stream of known length with `Content-Length`), the route's
    /// timeouts, trace context, `proxy`, TLS settings and Unix socket. The request's own client identity replaces the
    /// service's; a policy's key password is a secret reference until this factory resolves it.
    func outgoingRequest(to target: FallbackSelection.Target, headers: HTTPHeaders, proxy: ProxyServer?) throws(CourierError) -> HTTPRequest {
        let body: HTTPRequest.Body = bodyStream.map { stream in
            stream.length.map { .sizedStream(length: $0, stream.makeStream()) } ?? .stream(stream.makeStream())
        } ?? self.body.map { .bytes($0) } ?? .none
        var outgoing = HTTPRequest(
            method: method, url: hasAuthoriser ? authorised?.url ?? url : url, headers: headers, body: body,
            timeouts: route.timeouts, connectTo: target.address, userAgent: service.userAgent
        )
        execution.trace.decorate(&outgoing, route: route)
        outgoing.proxy = proxy
        outgoing.protocols = service.protocols
        // Only an https URL's connection is keyed and built with TLS settings.
        if url.scheme == "https" {
            let identity = execution.request.clientIdentity
            if route.serviceName != nil {
                var tls = route.tls.needsSecrets ? try execution.factory.resolvingSecrets(of: route.tls, url: requestURL) : route.tls
                if let identity { tls.clientIdentity = identity }
                outgoing.tlsOverlay = tls
            } else if let identity {
                outgoing.tlsOverlay = TLSPolicy(clientIdentity: identity)
            }
        }
        if route.serviceName != nil { outgoing.unixSocketPath = route.unixSocket }
        return outgoing
    }
}
