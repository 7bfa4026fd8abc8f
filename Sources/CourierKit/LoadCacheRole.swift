// The cache's part in a load, whatever the machine's payloads.

/// How the cache takes part in a load.
enum LoadCacheRole: Equatable {
    /// Not at all: no cache, or a method the cache neither answers nor invalidates.
    case none
    /// A `GET` or `HEAD`: look up first, store (or freshen from `HEAD`) after. `forceRevalidation`: a
    /// background revalidation, which never answers from the cache; `onlyIfCached`: the request's
    /// `only-if-cached`, answered 504 when nothing usable is stored.
    case lookUp(forceRevalidation: Bool, onlyIfCached: Bool)
    /// An unsafe method: its response invalidates the stored responses of the URL.
    case invalidate
}
