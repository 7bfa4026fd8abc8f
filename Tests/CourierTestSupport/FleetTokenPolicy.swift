/// The policy of the shared-token tests (issue 24): a Redis coordination section with a token key, an
/// `oauth2-refresh` authoriser with `share-tokens: true` against `tokenURL`, and a `local` service (127.0.0.1,
/// plain http) it authorises. The token key and the refresh token are `${env:…}` references named by
/// `tokenKeyVariable` and `refreshTokenVariable`.
public func fleetTokenPolicy(
    redis: String, tokenURL: String, clientID: String, tokenKeyVariable: String, refreshTokenVariable: String
) -> String {
    """
    version: 1
    coordination:
      redis:
        url: "\(redis)"
        timeout: 200ms
        token-key: "${env:\(tokenKeyVariable)}"
    authorisers:
      partner:
        plugin: oauth2-refresh
        share-tokens: true
        allow-plain-http: true
        settings:
          token-url: "\(tokenURL)"
          client-id: \(clientID)
          refresh-token: "${env:\(refreshTokenVariable)}"
    services:
      local:
        hosts: [127.0.0.1]
        scheme: http
        authoriser: partner
        timeouts: { total: 30s }
    """
}
