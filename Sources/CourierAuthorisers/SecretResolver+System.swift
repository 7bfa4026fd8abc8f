import CourierCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension SecretResolver {
    /// Resolves `${env:…}` from `environment` (the process's own by default) and `${file:…}` by reading the
    /// file from disk.
    public static func system(environment: [String: String] = ProcessInfo.processInfo.environment) -> SecretResolver {
        SecretResolver(environment: environment) { path in
            Array(try Data(contentsOf: URL(filePath: path)))
        }
    }
}

extension AuthoriserContext {
    /// A context with the process's environment and files for secrets and the system wall clock.
    public static func system(httpClient: any AuthoriserHTTPClient) -> AuthoriserContext {
        AuthoriserContext(secrets: .system(), httpClient: httpClient, clock: { Date().timeIntervalSince1970 })
    }
}
