internal import CourierAuthorisers
internal import CourierCore
internal import Synchronization

#if canImport(FoundationEssentials)
internal import FoundationEssentials
#else
internal import Foundation
#endif

/// The data loader's per-user half: made by ``DataLoaderService/makeFactory(environment:cacheIdentity:)``, it holds this
/// user's authoriser instances (made lazily, the first time a route names one, from the service's plugin
/// registry) and the offline switch. Views get a ``DataLoader`` from it.
public final class DataLoaderFactory: Sendable {
    /// The service this factory belongs to.
    public let service: DataLoaderService
    let context: AuthoriserContext
    /// The context of authorisers with `share-tokens: true`: the fleet's token store besides (nil: the policy
    /// has no coordination section or no `token-key`).
    let sharingContext: AuthoriserContext?
    /// Who this factory's user is to the HTTP cache (see ``DataLoaderService/makeFactory(environment:cacheIdentity:)``).
    let cacheIdentity: String
    /// An atomic, not a lock: every load reads it.
    private let offline = Atomic<Bool>(false)
    private let authorisers = Mutex<[AuthoriserInstance: AuthoriserSlot]>([:])
    /// A route's TLS settings with the client key's password resolved, by the settings as the policy has them.
    private let resolvedTLS = Mutex<[TLSPolicy: TLSPolicy]>([:])

    init(service: DataLoaderService, environment: [String: String], cacheIdentity: String) {
        self.service = service
        self.cacheIdentity = cacheIdentity
        let base = SecretResolver.system(environment: environment)
        let httpClient = TransportAuthoriserClient(client: service.client, protocols: service.protocols)
        self.context = AuthoriserContext(secrets: base, httpClient: httpClient, clock: service.wallClock)
        self.sharingContext = service.fleet?.tokenStore.map {
            AuthoriserContext(secrets: base, httpClient: httpClient, clock: service.wallClock, sharedTokens: $0)
        }
    }

    /// While true, nothing is sent: a request is answered from the HTTP cache (a fresh stored response, or a
    /// stale one without `must-revalidate` or `no-cache`), or fails at once with an `offline` error. Requests
    /// already in flight finish.
    public var isOffline: Bool {
        get { offline.load(ordering: .acquiring) }
        set { offline.store(newValue, ordering: .releasing) }
    }

    /// `tls` with its client key's password resolved from this factory's secrets (`${env:…}`, `${file:…}`), made
    /// once per settings: the transport's TLS context, which reads the key, is then shared by every request.
    func resolvingSecrets(of tls: TLSPolicy, url: String) throws(CourierError) -> TLSPolicy {
        if let known = resolvedTLS.withLock({ $0[tls] }) { return known }
        let resolved: TLSPolicy
        do {
            resolved = try tls.resolvingSecrets(context.secrets)
        } catch {
            throw CourierError(.tlsClientCertificate, "the client key's password could not be resolved: \(error.message)", url: url, cause: error)
        }
        resolvedTLS.withLock { $0[tls] = resolved }
        return resolved
    }

    /// Makes a loader for one view; its requests are cancelled when it is cancelled or freed.
    public func makeLoader() -> DataLoader {
        DataLoader(factory: self)
    }

    /// The authoriser for `instance`, made on first use. An instance changed by a policy reload is a new
    /// authoriser (with its own tokens); an unchanged one keeps its state across reloads.
    func authoriser(for instance: AuthoriserInstance) throws(CourierError) -> AuthoriserSlot {
        let made: Result<AuthoriserSlot, AuthoriserError> = authorisers.withLock { table in
            if let existing = table[instance] { return .success(existing) }
            var context = context
            if instance.shareTokens {
                guard let sharingContext else {
                    return .failure(AuthoriserError(
                        .invalidSetting, "share-tokens needs the policy's coordination section with a token-key", authoriser: instance.name
                    ))
                }
                context = sharingContext
            }
            do {
                let slot = AuthoriserSlot(
                    authoriser: try service.registry.makeAuthoriser(for: instance, context: context), instance: instance,
                    clock: service.clock
                )
                table[instance] = slot
                return .success(slot)
            } catch let error as AuthoriserError {
                return .failure(error)
            } catch {
                return .failure(AuthoriserError(.invalidSetting, "the plugin failed to start", authoriser: instance.name, cause: error))
            }
        }
        switch made {
        case .success(let authoriser): return authoriser
        case .failure(let error):
            throw CourierError(.authorisation, "authoriser '\(instance.name)' could not be made: \(error.message)", cause: error)
        }
    }
}
