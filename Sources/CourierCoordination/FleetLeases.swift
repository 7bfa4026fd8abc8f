internal import CourierCore

/// Slots of a fleet limit reserved ahead by one process, for keys whose limit has room and that this process loads
/// often: a call for a batch also asks for up to ``largest`` zero-wait slots (the script grants one only when the
/// limit lets it go at once, within its burst), and the process's next requests for the key take those slots with no
/// call, until they run out or ``lifetime`` passes (an unused slot is then dropped, not given back).
///
/// Why: a call is a Redis round trip, and on a loaded or virtualised machine its thread wake-ups cost more client CPU
/// than the whole HTTP exchange it admits (Benchmarks/README.md). A process that loads one key thousands of times a
/// second under a limit that does not bind pays one call per ``largest`` + 1 requests instead of one per request.
///
/// What it keeps: every slot is reserved in Redis by the one script, so the fleet's total never exceeds the limit;
/// a slot is used at most ``lifetime`` after Redis granted it, so in any span of `D` seconds the fleet sends at most
/// `rate × (D + lifetime) + burst`. Slots are asked for only when the key's last call let every member go at once
/// (the limit has room), when the process admitted requests for the key in the last ``lifetime`` (it will use
/// them), and at most `rate × lifetime / 4` of them (the limit refills them within a quarter of a lifetime): a
/// limit under 200 a second never leases, so the fleet limits partner APIs set are admitted one call per request (or
/// batch), exactly as before. A Retry-After pause drops the key's slots (``drop(_:)``).
///
/// A pure state machine: the caller passes the time and performs what it answers; no clock reads, no I/O.
struct FleetLeases {
    /// How long a leased slot may be used after its call was answered.
    static let lifetime: Duration = .milliseconds(20)
    /// The most slots one call asks for beyond its batch.
    static let largest = 16

    private struct Entry {
        /// Leased slots left, usable before `expires`.
        var slots = 0
        var expires: Deadline?
        /// Requests for the key in the current window of one lifetime (nil: none yet), and in the one before.
        var windowStart: Deadline?
        var inWindow = 0
        var previousWindow = 0
        /// Whether the key's last call let every member go at once.
        var hadRoom = false
    }

    private var entries: [String: Entry] = [:]

    /// A request for `key` arrived at `now` (counted as demand): true when it takes a leased slot (it goes at once,
    /// with no call). One lookup and one store: every fleet-limited load passes here.
    mutating func arrived(_ key: String, now: Deadline) -> Bool {
        var entry = entries[key] ?? Entry()
        let sinceWindow = entry.windowStart.map { now - $0 } ?? Self.lifetime * 2
        if sinceWindow >= Self.lifetime {
            entry.previousWindow = sinceWindow < Self.lifetime * 2 ? entry.inWindow : 0
            entry.inWindow = 0
            entry.windowStart = now
        }
        entry.inWindow += 1
        let took = Self.take(&entry, now: now)
        entries[key] = entry
        return took
    }

    /// A request already counted (one that waited behind a call) takes a leased slot of `key` if one is left.
    mutating func takeSlot(_ key: String, now: Deadline) -> Bool {
        guard var entry = entries[key], entry.slots > 0 else { return false }
        let took = Self.take(&entry, now: now)
        entries[key] = entry
        return took
    }

    /// Takes one of `entry`'s slots if one is left and unexpired; drops the expired ones.
    private static func take(_ entry: inout Entry, now: Deadline) -> Bool {
        guard entry.slots > 0 else { return false }
        guard let expires = entry.expires, now < expires else {
            entry.slots = 0
            return false
        }
        entry.slots -= 1
        return true
    }

    /// How many zero-wait slots the call about to be sent for `key` asks for beyond its members, under a limit of
    /// `requestsPerSecond`.
    func extra(_ key: String, requestsPerSecond: Double) -> Int {
        guard let entry = entries[key], entry.hadRoom else { return 0 }
        let refilled = requestsPerSecond * (Double(Self.lifetime / .milliseconds(1)) / 1000) / 4
        let cap = refilled >= Double(Self.largest) ? Self.largest : Int(refilled)
        return min(cap, max(entry.inWindow, entry.previousWindow))
    }

    /// The call for `key` was answered at `now`: `granted` extra slots are this process's until the lifetime
    /// passes, and `hadRoom` says whether every member went at once.
    mutating func answered(_ key: String, granted: Int, hadRoom: Bool, now: Deadline) {
        var entry = entries[key] ?? Entry()
        entry.slots = granted
        entry.expires = now + Self.lifetime
        entry.hadRoom = hadRoom
        entries[key] = entry
    }

    /// A pause (Retry-After) for `key`: its leased slots are dropped, and the next call asks for none.
    mutating func drop(_ key: String) {
        guard var entry = entries[key] else { return }
        entry.slots = 0
        entry.hadRoom = false
        entries[key] = entry
    }
}
