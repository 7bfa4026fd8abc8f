public import CourierCore
#if canImport(FoundationEssentials)
internal import FoundationEssentials
#else
internal import Foundation
#endif

extension SecretResolver {
    /// The largest secret file read (a token or key is far smaller; a larger file is a mistake).
    public static let maxSecretFileBytes = 1 << 20

    /// Resolves `${env:…}` from `environment` (the process's own by default) and `${file:…}` by reading the
    /// file from disk (a regular file of at most ``maxSecretFileBytes``).
    public static func system(environment: [String: String]? = nil) -> SecretResolver {
        SecretResolver(environment: environment ?? ProcessInfo.processInfo.environment) { path in
            try SystemCall.readFile(path, maxBytes: maxSecretFileBytes)
        }
    }
}

extension AuthoriserContext {
    /// A context with the process's environment and files for secrets and the system wall clock.
    public static func system(httpClient: any AuthoriserHTTPClient) -> AuthoriserContext {
        AuthoriserContext(secrets: .system(), httpClient: httpClient, clock: { WallClock.system.seconds })
    }
}
