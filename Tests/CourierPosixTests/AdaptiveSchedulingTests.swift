import Testing

@testable import CourierPosix

/// The adaptive loop's decision alone, without a thread: batch from 16 operations under way, normal again at 4
/// or fewer, and nothing in between (hysteresis), so a count that hovers near a threshold costs no system calls.
@Suite struct AdaptiveSchedulingTests {
    @Test func switchesAtTheThresholdsWithHysteresis() {
        var machine = AdaptiveScheduling()
        #expect(!machine.isBatch)
        for count in [0, 1, 5, 15] { #expect(machine.observe(operations: count) == nil, "\(count)") }
        #expect(machine.observe(operations: 16) == .toBatch)
        #expect(machine.isBatch)
        // Staying up, or falling but above the low threshold: no change.
        for count in [64, 16, 15, 8, 5] { #expect(machine.observe(operations: count) == nil, "\(count)") }
        #expect(machine.observe(operations: 4) == .toNormal)
        #expect(!machine.isBatch)
        for count in [4, 10, 15] { #expect(machine.observe(operations: count) == nil, "\(count)") }
        #expect(machine.observe(operations: 40) == .toBatch)
        #expect(machine.observe(operations: 0) == .toNormal)
    }
}
