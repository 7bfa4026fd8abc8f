public import CoreMetrics
internal import CourierAuthorisers
public import CourierCore
internal import CourierTransport
public import Logging
public import Tracing

#if canImport(FoundationEssentials)
internal import FoundationEssentials
#else
internal import Foundation
#endif

extension DataLoaderService {
    /// How a ``DataLoaderService`` behaves: everything but the policy (which says how each backend is talked to)
    /// and the transport. Start from ``init(userAgent:)`` and set what differs.
    ///
    /// ```swift
    /// var configuration = DataLoaderService.Configuration(userAgent: "MyApp/1.0")
    /// configuration.cacheDirectory = cachesPath + "/courier"
    /// let service = try DataLoaderService(policyFile: "policies/app.yaml", configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// Sent as `User-Agent` unless a request sets one; empty: none is sent.
        public var userAgent: String
        /// The authoriser plugins (the built-in ones by default); a policy's `plugin:` names one.
        public var registry: AuthoriserRegistry = .standard
        /// Where `${env:…}` secrets come from (the process's environment by default); a factory may add its own.
        public var environment: [String: String] = ProcessInfo.processInfo.environment
        /// How long a connect target (a host or a fallback) that failed to resolve or connect is skipped.
        public var fallbackCooldown: Duration = .seconds(30)
        /// Where the HTTP cache keeps its records (created if missing; its parent must exist); nil: no HTTP cache.
        /// Services whose policy has `cache:` are cached (RFC 9111, a private cache; docs/cache.md); the
        /// directory's size cap is the sum of their `max-size`s.
        public var cacheDirectory: String?
        /// The cache rules for hosts no service claims; nil: they are not cached.
        public var cachingUnclaimedHosts: CachePolicy?
        /// How many redirects a load follows before it fails with `too-many-redirects`; each hop is routed through
        /// the policy on its own. 0 follows none: a 3xx is the answer.
        public var maxRedirects = 10
        /// The largest body a load reads whole (``DataLoader/load(_:)``, and delegates that do not take chunks);
        /// larger fails with `body-too-large`.
        public var maxBodyBytes = 64 << 20
        /// Where the loader reads time and waits, the one clock of everything it times: rate limits, back-offs,
        /// Retry-After pauses (and dates), fleet waits, deadlines, authoriser timeouts, fallback cool-downs, and,
        /// through its wall clock (`LoaderClock.wall`), the cache's record times and freshness and the authorisers'
        /// token expiry (`AuthoriserContext.clock`). The system's clocks by default; a test passes
        /// `.manual(ManualClock())` and advances it instead of waiting (what it does not control: docs/loader.md).
        public var clock: LoaderClock = .system
        /// Where the loader's decisions go (`debug`) and its progress (`trace`), unless a request has its own
        /// ``Request/logger``; also the background logger of the client the service makes. Nowhere by default.
        public var logger: Logger = HTTPClient.loggingDisabled
        /// Where the request, retry, wait, byte and connection metrics go; swift-metrics' no-op factory by default,
        /// which costs nothing.
        public var metricsFactory: any MetricsFactory = NOOPMetricsHandler.instance
        /// Makes a span per load and per attempt, and injects the trace context into requests the policy allows
        /// (`propagate-trace-context`); the no-op tracer by default. The parent is the caller's task-local
        /// `InstrumentationContext`. Courier never bootstraps the global logging, metrics or instrumentation
        /// systems: what they would give is set here (docs/observability.md).
        public var tracer: any Tracer = NoOpTracer()
        /// A proxy every load goes through, over the policy's `proxy:` and the environment (curl's `-x`); nil:
        /// the policy decides, then the environment. Loads never fall back to a direct connection when it fails.
        public var proxy: ProxyServer?
        /// Hosts reached directly whatever proxy applies (curl's `--noproxy`; it replaces the environment's
        /// `no_proxy`): a comma-separated list of names (and the names under them), addresses, CIDR ranges,
        /// `host:port`, or `*`.
        public var noProxy: String?
        /// Whether ``environment``'s `https_proxy`, `http_proxy`, `all_proxy` and `no_proxy` apply to routes whose
        /// policy names no proxy (curl's rules: upper-case `HTTP_PROXY` is never read). True by default.
        public var usesEnvironmentProxies = true
        /// The protocol plugins that answer URLs of their schemes instead of a connection, through the policy like
        /// any load (a URL without a host, `data:,x`, is routed to the defaults): `ProtocolRegistry.standard`
        /// (`data:` only) by default. Add `FileProtocol` with a root to allow `file:` URLs (docs/protocol-plugins.md).
        public var protocols: ProtocolRegistry = .standard

        /// The defaults, sending `userAgent`.
        public init(userAgent: String) {
            self.userAgent = userAgent
        }
    }
}
