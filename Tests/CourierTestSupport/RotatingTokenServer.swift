import Foundation
import Synchronization

/// A token endpoint on 127.0.0.1 (over ``RecordingServer``) that rotates refresh tokens as RFC 9700 §4.14.2
/// describes: every refresh issues a new access token and a new refresh token; each refresh token works once; a
/// refresh token presented again is a replay, and revokes the whole family (`invalid_grant` from then on, for every
/// token of it). It also answers the client-credentials grant with a new access token each time.
///
/// Tokens carry a random run of hex digits, so that a scan of Redis for them cannot match by accident.
public final class RotatingTokenServer: Sendable {
    private struct State {
        var current: String
        var spent: Set<String> = []
        var revoked = false
        var refreshes = 0
        var replays = 0
        var clientCredentials = 0
        var issued: [String] = []
    }

    /// The endpoint's state, shared with the server's connection threads.
    private final class Shared: Sendable {
        let state: Mutex<State>
        init(_ state: State) { self.state = Mutex(state) }
    }

    public let initialRefreshToken: String
    private let server: RecordingServer
    private let shared: Shared

    /// - Parameters:
    ///   - expiresIn: the access tokens' `expires_in`.
    ///   - delay: how long each answer takes (so that concurrent refreshes would overlap).
    public init(expiresIn: Int = 3600, delay: Duration = .milliseconds(100)) throws {
        let family = String(UInt64.random(in: 0...UInt64.max), radix: 16)
        let initial = "RT-\(family)-0"
        let shared = Shared(State(current: initial))
        self.initialRefreshToken = initial
        self.shared = shared
        self.server = try RecordingServer { _, request in
            let form = Dictionary(
                request.bodyText.split(separator: "&").map { pair -> (String, String) in
                    let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                    return (parts[0], parts.count > 1 ? parts[1] : "")
                },
                uniquingKeysWith: { first, _ in first }
            )
            let invalidGrant = RecordingServer.Reply.json(400, #"{"error":"invalid_grant"}"#, delay: delay)
            return shared.state.withLock { state -> RecordingServer.Reply in
                switch form["grant_type"] {
                case "client_credentials":
                    state.clientCredentials += 1
                    let access = "AT-\(family)-cc\(state.clientCredentials)"
                    state.issued.append(access)
                    return .json(200, #"{"access_token":"\#(access)","token_type":"Bearer","expires_in":\#(expiresIn)}"#, delay: delay)
                case "refresh_token":
                    let presented = form["refresh_token"] ?? ""
                    if state.spent.contains(presented) {
                        state.replays += 1
                        state.revoked = true
                        return invalidGrant
                    }
                    guard !state.revoked, presented == state.current else { return invalidGrant }
                    state.refreshes += 1
                    state.spent.insert(presented)
                    state.current = "RT-\(family)-\(state.refreshes)"
                    let access = "AT-\(family)-\(state.refreshes)"
                    state.issued += [access, state.current]
                    return .json(
                        200,
                        #"{"access_token":"\#(access)","token_type":"Bearer","expires_in":\#(expiresIn),"refresh_token":"\#(state.current)"}"#,
                        delay: delay
                    )
                default:
                    return .json(400, #"{"error":"unsupported_grant_type"}"#)
                }
            }
        }
    }

    /// Refresh-token grants answered with a new token.
    public var refreshes: Int { shared.state.withLock { $0.refreshes } }
    /// Spent refresh tokens presented again (each revoked the family).
    public var replays: Int { shared.state.withLock { $0.replays } }
    public var revoked: Bool { shared.state.withLock { $0.revoked } }
    public var clientCredentialGrants: Int { shared.state.withLock { $0.clientCredentials } }
    /// Every access and refresh token issued, and the initial refresh token.
    public var secrets: [String] { shared.state.withLock { [initialRefreshToken] + $0.issued } }
    /// The access token of the n-th refresh.
    public func accessToken(_ n: Int) -> String { "AT-\(initialRefreshToken.dropFirst(3).dropLast(2))-\(n)" }
    /// Every request the endpoint received.
    public var requests: Int { server.requests.count }

    public func url(_ path: String = "/oauth/token") -> String { server.url(path) }
    public func stop() { server.stop() }
}
