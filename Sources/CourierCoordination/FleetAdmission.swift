package import CourierRedis

/// What the fleet's rate limit says about one request (``FleetCoordinator/admit(endpointKey:limit:maxWait:)``).
package enum FleetAdmission: Sendable, Equatable {
    /// A slot is reserved: send after this wait (zero: at once), measured from when the answer arrived. Not
    /// sending after all wastes the slot; it is not given back.
    case go(after: Duration)
    /// The request would have to wait this long, longer than the caller's `maxWait`; no slot was reserved, so
    /// nobody behind it waits for it. The caller fails the load (its deadline would pass).
    case wouldWaitTooLong(Duration)
    /// Redis could not be asked (down, hung, refused the script, answered garbage, or the caller was cancelled):
    /// the caller applies its `on-unavailable` choice. Nothing is known of the slot.
    case unavailable(RedisError)

    /// The admission `reply` of ``FleetScripts/admit`` says: `{1, wait}` or `{0, wait}` (microseconds); any other
    /// shape is a protocol error.
    package init(reply: RESPValue, backend: String) {
        if let elements = reply.elements, elements.count == 2, let allowed = elements[0].integer, let wait = elements[1].integer,
           wait >= 0, allowed == 0 || allowed == 1 {
            self = allowed == 1 ? .go(after: .microseconds(wait)) : .wouldWaitTooLong(.microseconds(wait))
        } else {
            self = .unavailable(RedisError(
                .protocolViolation, "the admission script answered \(FleetAdmission.shape(of: reply)), not [allowed, wait]",
                backend: backend
            ))
        }
    }

    /// The admissions a batch `reply` of ``FleetScripts/admit`` gives `count` requests: `{allowed, wait}` for each,
    /// flattened; any other shape is a protocol error for every one of them.
    package static func batch(reply: RESPValue, count: Int, backend: String) -> [FleetAdmission] {
        guard count > 1 else { return [FleetAdmission(reply: reply, backend: backend)] }
        if let elements = reply.elements, elements.count == 2 * count {
            let admissions = stride(from: 0, to: elements.count, by: 2).map {
                FleetAdmission(reply: .array([elements[$0], elements[$0 + 1]]), backend: backend)
            }
            if !admissions.contains(where: { if case .unavailable = $0 { return true } else { return false } }) { return admissions }
        }
        let error = RedisError(
            .protocolViolation, "the admission script answered \(shape(of: reply)) for a batch of \(count)", backend: backend
        )
        return Array(repeating: .unavailable(error), count: count)
    }

    /// A reply's type, for an error message (never its content: it could be anything).
    static func shape(of reply: RESPValue) -> String {
        switch reply {
        case .simpleString: return "a simple string"
        case .error, .blobError: return "an error"
        case .integer: return "an integer"
        case .bulkString: return "a bulk string"
        case .null: return "null"
        case .array(let elements): return "an array of \(elements.count)"
        case .boolean: return "a boolean"
        case .double: return "a double"
        case .bigNumber: return "a big number"
        case .verbatimString: return "a verbatim string"
        case .map(let entries): return "a map of \(entries.count)"
        case .set(let elements): return "a set of \(elements.count)"
        case .push: return "a push message"
        }
    }
}
