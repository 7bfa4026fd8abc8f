import CourierCore
import Testing

@testable import CourierKit

/// Which connect targets an attempt tries: the URL's host first, then the fallbacks in order, less those cooling
/// down, unless every one is.
@Suite struct FallbackSelectionTests {
    let fallbacks = [HostAddress(host: "backup1.example.com", port: nil), HostAddress(host: "10.0.0.2", port: 8443)]

    @Test func theHostComesFirstThenTheFallbacksInOrderWithTheURLsPortByDefault() {
        let selection = FallbackSelection(host: "api.example.com", port: 443, fallbacks: fallbacks) { _ in false }
        #expect(selection.candidates.map(\.label) == ["api.example.com:443", "backup1.example.com:443", "10.0.0.2:8443"])
        #expect(selection.candidates.map(\.address) == [nil] + fallbacks.map { Optional($0) })
        #expect(selection.skipped.isEmpty)
    }

    @Test func targetsCoolingDownAreSkippedAndNamed() {
        let selection = FallbackSelection(host: "api.example.com", port: 443, fallbacks: fallbacks) {
            $0 == "api.example.com:443"
        }
        #expect(selection.candidates.map(\.label) == ["backup1.example.com:443", "10.0.0.2:8443"])
        #expect(selection.skipped == ["api.example.com:443"])
    }

    @Test func whenEveryTargetIsCoolingDownAllAreTriedAgain() {
        let selection = FallbackSelection(host: "api.example.com", port: 443, fallbacks: fallbacks) { _ in true }
        #expect(selection.candidates.count == 3)
        #expect(selection.skipped.isEmpty)
    }

    @Test func aLoneTargetIsTriedWithoutAskingAboutItsCoolDown() {
        var asked = 0
        let selection = FallbackSelection(host: "api.example.com", port: 80, fallbacks: []) { _ in
            asked += 1
            return true
        }
        #expect(selection.candidates.map(\.label) == ["api.example.com:80"])
        #expect(asked == 0)
    }
}
