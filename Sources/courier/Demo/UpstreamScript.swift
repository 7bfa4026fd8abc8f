internal import CourierCore

/// What the demo upstream answers, and a record of what it saw: a pure state machine (a request and the time in,
/// a reply and a record out; no I/O, no clock reads). Each path plays one scenario:
///
/// - `GET /search`: always 200 (the pacing is the loader's rate limit, not the server's).
/// - `GET /busy`: 429 with `Retry-After: 1` the first time, 200 afterwards.
/// - `GET /flaky`: 503 twice, then 200.
/// - `POST /oauth/token`: the refresh-token grant; issues `demo-access-1`, `demo-access-2`, … for the demo's
///   refresh token and client id, `400 invalid_grant` for anything else.
/// - `GET /me`: 200 with a valid bearer token, else 401. The first access token is revoked as soon as it is
///   issued (as a server does after a password change), so the first requests get 401 and need one refresh.
/// - `GET /status`: 200, saying which `Host` header it got (the fallback scenario).
/// - anything else: 404.
struct UpstreamScript {
    /// The refresh token the token endpoint accepts.
    let refreshToken: String
    /// The client id the token endpoint accepts (any, when nil: the policy's is not a literal).
    let clientID: String?
    /// The delay `/busy` asks for.
    static let retryAfterSeconds = 1
    /// How many times `/flaky` fails before it recovers.
    static let flakyFailures = 2

    private enum BusyState {
        case fresh
        case throttledOnce
    }

    private enum FlakyState {
        case failing(served: Int)
        case recovered
    }

    private var busy = BusyState.fresh
    private var flaky = FlakyState.failing(served: 0)
    /// Access tokens issued so far; token `n` is `demo-access-n`.
    private(set) var tokensIssued = 0
    /// Token numbers the server no longer accepts.
    private var revoked: Set<Int> = []
    private(set) var records: [UpstreamRecord] = []

    init(refreshToken: String, clientID: String?) {
        self.refreshToken = refreshToken
        self.clientID = clientID
    }

    /// Answers `request`, which arrived `at` (since the demo started), and records it.
    mutating func handle(_ request: UpstreamRequest, at: Duration) -> (UpstreamReply, UpstreamRecord) {
        let (reply, note) = answer(request)
        let record = UpstreamRecord(
            at: at, line: request.line, path: request.path, host: request.host, status: reply.status, note: note
        )
        records.append(record)
        return (reply, record)
    }

    private mutating func answer(_ request: UpstreamRequest) -> (UpstreamReply, String) {
        switch (request.method, request.path) {
        case ("GET", "/search"):
            return (.json(200, #"{"results":["courier","loader","policy"]}"#), "results")
        case ("GET", "/busy"):
            switch busy {
            case .fresh:
                busy = .throttledOnce
                return (
                    .text(429, "slow down", headers: ["Retry-After": "\(UpstreamScript.retryAfterSeconds)"]),
                    "throttling: Retry-After: \(UpstreamScript.retryAfterSeconds)"
                )
            case .throttledOnce:
                return (.json(200, #"{"busy":false}"#), "the pause is over")
            }
        case ("GET", "/flaky"):
            switch flaky {
            case .failing(let served):
                let failure = served + 1
                flaky = failure < UpstreamScript.flakyFailures ? .failing(served: failure) : .recovered
                return (
                    .text(503, "temporarily unavailable"),
                    "failing on purpose (\(failure) of \(UpstreamScript.flakyFailures))"
                )
            case .recovered:
                return (.json(200, #"{"flaky":"recovered"}"#), "recovered")
            }
        case ("POST", "/oauth/token"):
            return token(request)
        case ("GET", "/me"):
            let token = request.headers["authorization"].flatMap(UpstreamScript.tokenNumber)
            guard let token, token <= tokensIssued, !revoked.contains(token) else {
                let why = token.map { "access token \($0) was revoked" } ?? "no valid bearer token"
                return (.text(401, "invalid token", headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#]), why)
            }
            return (.json(200, #"{"user":"demo"}"#), "access token \(token) accepted")
        case ("GET", "/status"):
            return (.text(200, "served by the fallback for Host \(request.host)"), "Host: \(request.host)")
        default:
            return (.text(404, "no such demo endpoint"), "not a demo endpoint")
        }
    }

    private mutating func token(_ request: UpstreamRequest) -> (UpstreamReply, String) {
        let form = request.formFields
        guard form["grant_type"] == "refresh_token" else {
            return (.json(400, #"{"error":"unsupported_grant_type"}"#), "not a refresh-token grant")
        }
        guard let client = form["client_id"], clientID == nil || client == clientID else {
            return (.json(400, #"{"error":"invalid_client"}"#), "unknown client id")
        }
        guard form["refresh_token"] == refreshToken else {
            return (.json(400, #"{"error":"invalid_grant"}"#), "wrong refresh token")
        }
        tokensIssued += 1
        var note = "issued access token \(tokensIssued)"
        if tokensIssued == 1 {
            revoked.insert(1)
            note += " (and revokes it at once, so the first requests get 401)"
        }
        let body = #"{"access_token":"demo-access-\#(tokensIssued)","token_type":"Bearer","expires_in":3600}"#
        return (.json(200, body), note)
    }

    /// `n` for `Bearer demo-access-n`.
    private static func tokenNumber(_ authorization: String) -> Int? {
        let prefix = "Bearer demo-access-"
        guard authorization.hasPrefix(prefix) else { return nil }
        return Int(authorization.dropFirst(prefix.count))
    }
}
