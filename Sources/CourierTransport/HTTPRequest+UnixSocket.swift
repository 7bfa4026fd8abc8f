public import CourierCore

extension HTTPRequest {
    /// A request to a Unix domain socket written as AsyncHTTPClient writes it: `http+unix://` (or `https+unix://`)
    /// with the socket's path percent-encoded as the host, `http+unix://%2Frun%2Fdocker.sock/v1.43/info`. The
    /// request's ``url`` is then `http://localhost/v1.43/info` (its `Host` field says `localhost`) and
    /// ``unixSocketPath`` the decoded path. nil when `unixSocketURL` is not of that form.
    public init?(method: HTTPMethod = .get, unixSocketURL: String, headers: HTTPHeaders = HTTPHeaders(), body: Body = .none) {
        guard let (path, url) = UnixSocketURL.parse(unixSocketURL) else { return nil }
        self.init(method: method, url: url, headers: headers, body: body)
        unixSocketPath = path
    }
}
