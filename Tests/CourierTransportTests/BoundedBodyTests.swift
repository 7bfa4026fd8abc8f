import CourierTransport
import Testing

/// The one rule for how much of a body is kept.
@Suite struct BoundedBodyTests {
    @Test func chunksAreKeptUpToTheLimitExactly() {
        var body = BoundedBody(limit: 10)
        let ok1 = body.append([1, 2, 3, 4])
        #expect(ok1)
        #expect(body.room == 6)
        let ok2 = body.append([5, 6, 7, 8, 9, 10])
        #expect(ok2)
        #expect(body.bytes == Array(1...10))
        #expect(body.room == 0)
        #expect(!body.overflowed)
    }

    @Test func aChunkPastTheLimitDropsEverythingAndLaterChunksToo() {
        var body = BoundedBody(limit: 4)
        let ok3 = body.append([1, 2, 3])
        #expect(ok3)
        let ok4 = body.append([4, 5])
        #expect(!ok4)
        #expect(body.overflowed)
        #expect(body.bytes.isEmpty)
        let ok5 = body.append([6])
        #expect(!ok5)
        #expect(body.room == 0)
        body.reset()
        #expect(!body.overflowed)
        let ok6 = body.append([7, 8, 9, 10])
        #expect(ok6)
        #expect(body.bytes == [7, 8, 9, 10])
    }

    @Test func aZeroLimitKeepsOnlyEmptyChunks() {
        var body = BoundedBody(limit: 0, expectedLength: 100)
        let ok7 = body.append([UInt8]())
        #expect(ok7)
        let ok8 = body.append([1])
        #expect(!ok8)
    }
}
