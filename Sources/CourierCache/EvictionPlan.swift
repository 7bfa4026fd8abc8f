/// The size-cap eviction decision: pure, with the file system's figures as parameters.
///
/// As in SPTPersistentCache, the store may use at most `min(sizeCap, free + used − total × minimumFreeFraction)`
/// bytes, so it never eats into the file system's last 10 % (by default). Unlike it, the order is true LRU on
/// the header's access time in nanoseconds (the ancestor used the file mtime scaled by 1e9 instead of 1e-9,
/// which made the order arbitrary), and locked records are never candidates: their bytes count towards the
/// total but are never freed.
enum EvictionPlan {
    /// The number of bytes the store may hold.
    static func targetBytes(
        usedBytes: Int64, sizeCap: Int64, space: FileSystemSpace, minimumFreeFraction: Double
    ) -> Int64 {
        let reserve = Int64((Double(space.totalBytes) * minimumFreeFraction).rounded(.up))
        let allowed = max(0, space.freeBytes.addingReportingOverflow(usedBytes).partialValue - reserve)
        return min(sizeCap, allowed)
    }

    /// The records to remove, least recently used first, until the store's bytes (the unlocked candidates plus
    /// `lockedBytes`) fit the target. If the locked records alone exceed it, every candidate goes and no more.
    static func victims(
        candidates: [EvictionCandidate], lockedBytes: Int64, sizeCap: Int64, space: FileSystemSpace,
        minimumFreeFraction: Double
    ) -> [EvictionCandidate] {
        var used = candidates.reduce(lockedBytes) { $0 + $1.size }
        let target = targetBytes(usedBytes: used, sizeCap: sizeCap, space: space, minimumFreeFraction: minimumFreeFraction)
        let oldestFirst = candidates.sorted { ($0.accessTime, $0.name) < ($1.accessTime, $1.name) }
        var victims: [EvictionCandidate] = []
        for candidate in oldestFirst where used > target {
            victims.append(candidate)
            used -= candidate.size
        }
        return victims
    }
}
