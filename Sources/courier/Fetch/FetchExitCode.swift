internal import CourierKit
internal import CourierCore

/// `courier fetch`'s exit statuses: curl's numbers, so scripts written for curl keep working.
enum FetchExitCode {
    static let success: Int32 = 0
    static let usage: Int32 = 2
    /// With `--fail`, a response with status 400 or more.
    static let httpError: Int32 = 22
    /// A body arrived but could not be written to its `-o` file or standard output (a full disk): CURLE_WRITE_ERROR.
    static let writeError: Int32 = 23
    /// `-C`: the server did not send the range asked for: CURLE_RANGE_ERROR.
    static let rangeError: Int32 = 33

    /// `--offline` and nothing stored answers: sysexits' EX_TEMPFAIL (curl's 75 has been unused since 7.82).
    static let offline: Int32 = 75

    /// The policy's coordination backend could not be reached and the policy says `on-unavailable: closed`:
    /// sysexits' EX_UNAVAILABLE (curl has no number for it).
    static let coordination: Int32 = 69  // also `courier fleet status`'s, for a backend it cannot read

    /// The exit status for a failed request, by error kind.
    static func code(for kind: CourierError.Kind) -> Int32 {
        switch kind {
        case .proxyResolve: return 5  // CURLE_COULDNT_RESOLVE_PROXY
        case .resolve: return 6
        case .connect: return 7
        case .timeout: return 28
        case .tlsHandshake: return 35
        case .tlsCertificate: return 60
        case .tlsPin: return 90  // CURLE_SSL_PINNEDPUBKEYNOTMATCH
        case .tlsClientCertificate: return 58  // CURLE_SSL_CERTPROBLEM: the local client certificate
        case .protocol: return 56
        case .proxyTunnel: return 56  // curl's "CONNECT tunnel failed"
        case .socks: return 97  // CURLE_PROXY
        case .tooManyRedirects: return 47
        case .bodyTooLarge: return 63  // CURLE_FILESIZE_EXCEEDED
        case .cancelled, .shutdown: return 42  // CURLE_ABORTED_BY_CALLBACK
        case .authorisation: return 67  // CURLE_LOGIN_DENIED: the authoriser could not get credentials (--policy)
        case .policy: return 2
        case .protocolPlugin: return 37  // CURLE_FILE_COULDNT_READ_FILE: a file: or data: URL could not be read
        case .offline: return offline
        case .coordination: return coordination
        default: return 1
        }
    }
}
