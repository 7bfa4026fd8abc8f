package import CourierCore
package import CourierCrypto
package import CourierRedis

/// The fleet's shared OAuth token records in Redis: a ``CourierCore/SharedTokenStore`` over a ``RedisClient``.
///
/// A record lives under ``FleetKeys/token(identity:)``, sealed with AES-256-GCM (``AES256GCM``) under the
/// policy's 32-byte token key, with the key's name as associated data: a record copied to another key does not
/// open, and neither does one sealed under another key (every instance must share one token key). The refresh lock
/// is ``FleetKeys/tokenLock(identity:)`` (``RedisTokenLock``); what happens next is decided by
/// ``SharedTokenStateMachine``. When Redis cannot be reached, ``TokenStoreFallback`` says whether to refresh in
/// this process or fail.
///
/// The store does not own the client: whoever made it shuts it down.
package final class RedisTokenStore: SharedTokenStore {
    package let client: RedisClient
    package let keys: FleetKeys
    package let fallback: TokenStoreFallback
    /// How long the refresh lock lasts without renewal: how long the fleet waits for a holder that died.
    package let lease: Duration
    /// The range a waiter's pause between reads of the record is drawn from.
    package let poll: ClosedRange<Duration>
    private let cipher: AES256GCM
    /// Told how each ``obtain(identity:waitingAtMost:isUsable:refresh:)`` that returned a token got it (metrics).
    private let observe: @Sendable (SharedTokenOutcome) -> Void

    package init(
        client: RedisClient,
        keys: FleetKeys = FleetKeys(),
        cipher: AES256GCM,
        fallback: TokenStoreFallback = .local,
        lease: Duration = .seconds(3),
        poll: ClosedRange<Duration> = .milliseconds(20) ... .milliseconds(50),
        observe: @escaping @Sendable (SharedTokenOutcome) -> Void = { _ in }
    ) {
        self.observe = observe
        self.client = client
        self.keys = keys
        self.cipher = cipher
        self.fallback = fallback
        self.lease = lease
        self.poll = poll
    }

    package func read(identity: String) async throws -> [UInt8]? {
        do {
            return try await fetch(keys.token(identity: identity))
        } catch let error as RedisError {
            if error.kind == .cancelled { throw CancellationError() }
            guard fallback == .failClosed else { return nil }
            throw unavailable(error)
        }
    }

    package func obtain(
        identity: String,
        waitingAtMost maximumWait: Duration,
        isUsable: @Sendable ([UInt8]) -> Bool,
        refresh: @Sendable (_ stored: [UInt8]?) async throws -> SharedTokenRecord
    ) async throws -> [UInt8] {
        let recordKey = keys.token(identity: identity)
        let lock = RedisTokenLock(client: client, key: keys.tokenLock(identity: identity), lease: lease)
        var machine = SharedTokenStateMachine(deadline: .now() + maximumWait, poll: poll, fallback: fallback)
        var action = machine.start()
        var record: [UInt8]?
        var holding = false
        var waited = false
        do {
            while true {
                switch action {
                case .read:
                    do {
                        record = try await fetch(recordKey)
                        action = machine.recordRead(usable: record.map(isUsable) ?? false)
                    } catch let error as RedisError {
                        action = try machine.redisFailed(notCancelled(error))
                    }
                case .acquireLock:
                    do {
                        holding = try await lock.acquire()
                        action = machine.lockAnswered(acquired: holding, now: .now(), jitter: Double.random(in: 0...1))
                    } catch {
                        action = try machine.redisFailed(notCancelled(error))
                    }
                case .sleep(let until):
                    let now = Deadline.now()
                    if now < until { try await Task.sleep(for: until - now) }
                    waited = true
                    action = machine.woke()
                case .deliver(let release):
                    if release { await lock.release() }
                    holding = false
                    observe(waited ? .waited : .reused)
                    return record ?? []
                case .refresh:
                    let stored = record
                    let fresh = try await lock.renewing { try await refresh(stored) }
                    await write(fresh, at: recordKey)
                    await lock.release()
                    holding = false
                    observe(.refreshed)
                    return fresh.bytes
                case .refreshLocally:
                    let fresh = try await refresh(record)
                    if holding { await lock.release() }
                    holding = false
                    observe(.local)
                    return fresh.bytes
                case .fail(.unavailable(let error)):
                    throw unavailable(error)
                case .fail(.waitTimedOut):
                    throw AuthoriserError(
                        .sharedTokenWaitTimedOut,
                        "another instance held the fleet's refresh lock (\(lock.key)) and no usable token appeared within \(maximumWait)"
                    )
                }
            }
        } catch {
            if holding { await lock.release() }
            throw error
        }
    }

    /// The record at `key`, opened; nil when there is none.
    ///
    /// - Throws: ``RedisError``, or ``CourierCore/AuthoriserError`` (`shared-token-unreadable`) for a record that
    ///   does not open with this store's key.
    private func fetch(_ key: String) async throws -> [UInt8]? {
        let reply = try await client.send(RedisCommand("GET", key))
        if reply == .null { return nil }
        guard let sealed = reply.bytes else {
            throw RedisError(.protocolViolation, "GET answered something other than a string", backend: client.backend)
        }
        do {
            return try cipher.open(sealed, associatedData: Array(key.utf8))
        } catch {
            throw AuthoriserError(
                .sharedTokenUnreadable,
                "the shared token record \(key) in redis \(client.backend) cannot be decrypted with this instance's token key "
                    + "(every instance must use the same token-key), or was altered",
                cause: error
            )
        }
    }

    /// Seals and stores `record` for its lifetime. A failure is not the caller's: it has its token, and the next
    /// instance that finds no usable record refreshes.
    private func write(_ record: SharedTokenRecord, at key: String) async {
        let sealed = cipher.seal(record.bytes, associatedData: Array(key.utf8))
        let milliseconds = String(max(1, record.keepFor.nanosecondsClamped / 1_000_000))
        _ = try? await client.send(RedisCommand("SET", arguments: [Array(key.utf8), sealed, Array("PX".utf8), Array(milliseconds.utf8)]))
    }

    private func notCancelled(_ error: any Error) throws -> RedisError {
        guard let redis = error as? RedisError else { throw error }
        if redis.kind == .cancelled { throw CancellationError() }
        return redis
    }

    private func unavailable(_ error: RedisError) -> AuthoriserError {
        AuthoriserError(
            .sharedTokensUnavailable, "the shared token store cannot be used, and it is set to fail closed", cause: error
        )
    }
}
