internal import CCourierOpenSSL
internal import Synchronization

/// Sessions kept for resumption, per origin (`host:port` as verified, not the address connected to), bounded in
/// origins and in sessions per origin. A TLS 1.3 ticket is taken out when used (single use, RFC 8446 §C.4); a
/// TLS 1.2 session stays until a newer one replaces it or the origin is evicted (least recently used).
///
/// The cache owns one reference to each `SSL_SESSION` it holds and frees it when it lets it go.
final class TLSSessionCache: Sendable {
    private struct Entry {
        var sessions: [Session] = []
        var lastUse: UInt64 = 0
    }

    /// An `SSL_SESSION*` with one reference owned by the cache; only ever touched under the lock or after
    /// being handed out with its own reference.
    struct Session: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private struct State: ~Copyable {
        var entries: [String: Entry] = [:]
        var clock: UInt64 = 0
    }

    let maxOrigins: Int
    let maxSessionsPerOrigin: Int
    private let state = Mutex(State())

    init(maxOrigins: Int = 256, maxSessionsPerOrigin: Int = 4) {
        self.maxOrigins = maxOrigins
        self.maxSessionsPerOrigin = maxSessionsPerOrigin
    }

    deinit {
        state.withLock { s in
            for entry in s.entries.values { for session in entry.sessions { SSL_SESSION_free(session.pointer) } }
        }
    }

    /// Adopts `session` (one reference, now the cache's) for `origin`, newest first.
    func store(_ session: OpaquePointer, for origin: String) {
        var evicted: [Session] = []
        state.withLock { s in
            s.clock += 1
            var entry = s.entries[origin] ?? Entry()
            entry.sessions.insert(Session(pointer: session), at: 0)
            if entry.sessions.count > maxSessionsPerOrigin { evicted += entry.sessions.dropFirst(maxSessionsPerOrigin) }
            entry.sessions = Array(entry.sessions.prefix(maxSessionsPerOrigin))
            entry.lastUse = s.clock
            s.entries[origin] = entry
            if s.entries.count > maxOrigins, let oldest = s.entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
                evicted += s.entries.removeValue(forKey: oldest)?.sessions ?? []
            }
        }
        for session in evicted { SSL_SESSION_free(session.pointer) }
    }

    /// A session to offer for `origin`, with a reference of its own for the caller (who frees it with
    /// `SSL_SESSION_free` once `SSL_set_session` took its own); nil when there is none.
    func take(for origin: String) -> OpaquePointer? {
        state.withLock { s -> OpaquePointer? in
            guard var entry = s.entries[origin], let newest = entry.sessions.first else { return nil }
            s.clock += 1
            entry.lastUse = s.clock
            if SSL_SESSION_get_protocol_version(newest.pointer) >= TLS1_3_VERSION {
                // Single use: the cache's reference passes to the caller.
                entry.sessions.removeFirst()
                if entry.sessions.isEmpty { s.entries[origin] = nil } else { s.entries[origin] = entry }
                return newest.pointer
            }
            s.entries[origin] = entry
            SSL_SESSION_up_ref(newest.pointer)
            return newest.pointer
        }
    }

    /// Drops every session of `origin` (after a failed resumption or pin check).
    func forget(_ origin: String) {
        let dropped = state.withLock { $0.entries.removeValue(forKey: origin)?.sessions ?? [] }
        for session in dropped { SSL_SESSION_free(session.pointer) }
    }

    /// Sessions held, over all origins (for tests).
    var count: Int { state.withLock { $0.entries.values.reduce(0) { $0 + $1.sessions.count } } }
}
