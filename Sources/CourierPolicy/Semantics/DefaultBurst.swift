/// The built-in burst for a rate: max(1, ceil(rps)).
func defaultBurst(_ rps: Double) -> Int {
    let c = rps.rounded(.up)
    return c >= 1 ? (c < 1e9 ? Int(c) : 1_000_000_000) : 1
}
