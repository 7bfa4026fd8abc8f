/// The protocol plugins a client or data loader service answers URLs with, by scheme.
///
/// A value, built at start-up like the authoriser registry and handed to `DataLoaderService.Configuration.protocols`
/// or `HTTPClientConfiguration.protocols`. ``standard`` holds ``DataProtocol`` alone: a `data:` URL carries its
/// own bytes and reads neither the disk nor the network. `file:` is never there by default (a URL from user input
/// must not read the disk); register ``FileProtocol`` with a root to allow it. A URL whose scheme no plugin claims
/// and that is not http(s) fails with `policy` before anything is sent; http and https go to Courier's sockets
/// unless a plugin claims them.
public struct ProtocolRegistry: Sendable {
    private var bySchemes: [String: any ProtocolPlugin] = [:]
    /// Whether a plugin claims http or https (then every request looks its scheme up; else only other schemes do).
    package private(set) var claimsHTTP = false

    /// A registry of these plugins (none by default: only http and https, through sockets).
    public init(_ plugins: [any ProtocolPlugin] = []) {
        for plugin in plugins { register(plugin) }
    }

    /// ``DataProtocol`` for `data:` URLs: the default of the data loader and of ``HTTPURL``-level clients.
    public static var standard: ProtocolRegistry { ProtocolRegistry([DataProtocol()]) }

    /// Registers a plugin for each of its schemes. A scheme claimed twice is a programming error and traps, so
    /// two plugins cannot silently shadow each other (start from an empty registry to replace a built-in).
    public mutating func register(_ plugin: any ProtocolPlugin) {
        for scheme in plugin.schemes {
            let scheme = scheme.lowercased()
            precondition(bySchemes[scheme] == nil, "the URL scheme '\(scheme)' is claimed by two protocol plugins")
            bySchemes[scheme] = plugin
            if scheme == "http" || scheme == "https" { claimsHTTP = true }
        }
    }

    /// A copy with one more plugin.
    public func registering(_ plugin: any ProtocolPlugin) -> ProtocolRegistry {
        var copy = self
        copy.register(plugin)
        return copy
    }

    /// The schemes claimed, sorted.
    public var schemes: [String] { bySchemes.keys.sorted() }

    /// The plugin that answers `scheme` (lower case), if any.
    public func plugin(for scheme: String) -> (any ProtocolPlugin)? { bySchemes[scheme] }

    /// The plugin that answers `url`, if any: for an http(s) URL only when a plugin claims http(s), so that the
    /// usual request pays no look-up.
    package func plugin(answering url: HTTPURL) -> (any ProtocolPlugin)? {
        if url.isHTTP && !claimsHTTP { return nil }
        return bySchemes[url.scheme]
    }

    /// Whether `url` can be answered: it is http(s), or a plugin claims its scheme.
    package func answers(_ url: HTTPURL) -> Bool { url.isHTTP || bySchemes[url.scheme] != nil }
}
