import CourierPosix

/// Waits up to `seconds` for this process's sockets, pipes and event descriptors
/// (``OpenFileDescriptors/countNotOnDisk()``) to fall to `baseline`, and returns the last count. Suites running in
/// parallel open and close their own meanwhile, so a leak test polls rather than reads once; a leak never settles.
public func settledDescriptorCount(atMost baseline: Int, within seconds: Double = 10) async throws -> Int {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    var count = try OpenFileDescriptors.countNotOnDisk()
    while count > baseline, ContinuousClock.now < deadline {
        try await Task.sleep(for: .milliseconds(10))
        count = try OpenFileDescriptors.countNotOnDisk()
    }
    return count
}
