import Testing

@testable import CourierCore

/// HTTP-dates (RFC 9110 §5.6.7): the three forms recipients accept, and IMF-fixdate out.
@Suite struct HTTPDateTests {
    /// 1994-11-06T08:49:37Z, RFC 9110's example.
    static let example = 784_111_777.0

    @Test(arguments: [
        "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
        "  Sun, 06 Nov 1994 08:49:37 GMT\t",
    ])
    func threeForms(text: String) {
        #expect(HTTPDate.parse(text) == Self.example)
    }

    /// RFC 9111 §5.3 relies on these being invalid (an `Expires` of `0` means already expired).
    @Test(arguments: [
        "0", "-1", "", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 31 Nov 1994 25:00:00 GMT", "Sun, 6 Nov 1994 08:49:37 GMT",
        // 29 bytes, the IMF-fixdate fast path's length, each wrong in one place.
        "Xyz, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Noo 1994 08:49:37 GMT", "Sun, 0x Nov 1994 08:49:37 GMT",
        "Sun, 00 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:60:37 GMT", "Sun, 06 Nov 1994 08:49:61 GMT",
        "Sun; 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08-49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMX",
        "Sun, 06 Nov 199a 08:49:37 GMT", "sun, 06 nov 1994 08:49:37 gmt",
    ])
    func invalid(text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }

    @Test(arguments: [0.0, 784_111_777, 951_782_400, 4_102_444_799, -86_400])
    func formatParsesBack(seconds: Double) {
        #expect(HTTPDate.parse(HTTPDate.format(seconds)) == seconds)
    }

    /// Found by FuzzCacheHeaders: an asctime `Expires` in the year 997 parsed, but was formatted with a
    /// three-digit year that IMF-fixdate (`year = 4DIGIT`) and so `parse` refuse.
    @Test func yearsBeforeOneThousandAreWrittenWithFourDigits() throws {
        let instant = try #require(HTTPDate.parse("Sun Nov  6 08:49:37 0997"))
        #expect(HTTPDate.format(instant) == "Mon, 06 Nov 0997 08:49:37 GMT")
        #expect(HTTPDate.parse(HTTPDate.format(instant)) == instant)
        let yearZero = try #require(HTTPDate.parse("Sat, 01 Jan 0000 00:00:00 GMT"))
        #expect(HTTPDate.format(yearZero) == "Sat, 01 Jan 0000 00:00:00 GMT")
    }

    /// Found by FuzzCacheHeaders: `Int(_:)` took a sign, so `-024` was read as a four-digit year (and formatted
    /// as `-24`, which did not parse back); days and times took `+6` and `+8` too.
    @Test(arguments: [
        "Sun, 03 Nov -024 08:49:37 GMT", "Sun, 03 Nov +994 08:49:37 GMT", "Sun, +6 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 +8:49:37 GMT", "Sun, 06 Nov 1994 08:-9:37 GMT", "Sunday, +6-Nov-94 08:49:37 GMT",
        "Sunday, 06-Nov-+4 08:49:37 GMT", "Sun Nov +6 08:49:37 1994", "Sun Nov  6 08:49:37 -994",
    ])
    func signedNumbersAreNotDigits(text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }

    @Test func formatsIMFFixdate() {
        #expect(HTTPDate.format(Self.example) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(951_782_400) == "Tue, 29 Feb 2000 00:00:00 GMT")
    }
}
