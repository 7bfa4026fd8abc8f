import Foundation
import Testing

@Suite struct BinaryLocationTests {
    @Test func builtBinaryIsNextToTheTestBundle() {
        #expect(
            FileManager.default.isExecutableFile(atPath: CourierProcess.binary.path),
            "no courier executable at \(CourierProcess.binary.path)"
        )
    }
}
