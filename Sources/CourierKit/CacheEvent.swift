public import CourierCore

/// What the HTTP cache did for a request (a ``LoaderEvent/Kind/cache(_:)`` trace event). Only routes whose
/// service has `cache:` in its policy report them.
public enum CacheEvent: Sendable, CustomStringConvertible {
    /// A fresh stored response answers the request: nothing is sent.
    case hit
    /// Nothing usable is stored: the request goes to the origin.
    case miss
    /// A stored response is stale (or must be revalidated): a conditional request goes to the origin.
    case revalidating
    /// The origin answered 304: the stored response, freshened, is the answer.
    case revalidated
    /// A stale stored response is the answer, for `why`.
    case stale(why: StaleReason)
    /// The response was stored.
    case stored
    /// The response was not stored, for `reason` (e.g. `no-store`, a status that is not cacheable).
    case notStored(reason: String)
    /// The response to an unsafe method removed the stored responses of its URL (and its `Location`).
    case invalidated
    /// The cache could not be read or written (`error`): the load goes on without it.
    case failed(error: CourierError)

    /// Why a stale response was delivered.
    public enum StaleReason: Sendable, Hashable, CustomStringConvertible {
        /// The request's `max-stale` accepts it.
        case maxStale
        /// Within the response's `stale-while-revalidate` window: it is revalidated after delivery.
        case staleWhileRevalidate
        /// The origin failed (`error`) and the stored response's `stale-if-error` window allows it.
        case originFailed(error: CourierError.Kind)
        /// The factory is offline.
        case offline

        /// The reason, in a few words.
        public var description: String {
            switch self {
            case .maxStale: "the request's max-stale accepts it"
            case .staleWhileRevalidate: "within stale-while-revalidate; revalidating in the background"
            case .originFailed(let kind): "the origin failed (\(kind)) within stale-if-error"
            case .offline: "the loader is offline"
            }
        }
    }

    /// The event, in a few words, as trace lines print it.
    public var description: String {
        switch self {
        case .hit: "cache hit: fresh, nothing sent"
        case .miss: "cache miss"
        case .revalidating: "cache: stored response is stale, revalidating"
        case .revalidated: "cache: 304, stored response freshened"
        case .stale(let why): "cache: serving a stale response (\(why))"
        case .stored: "cache: stored"
        case .notStored(let reason): "cache: not stored (\(reason))"
        case .invalidated: "cache: stored responses for the URL invalidated"
        case .failed(let error): "cache unavailable (\(error.kind): \(error.message)); going on without it"
        }
    }
}
