import CourierCore
import CourierHTTP1
import Testing

/// The head's fields and the trailers are read by one `FieldSectionReader`: the same line gives the same fields
/// or the same error, at the same place in its section, in both.
@Suite struct FieldSectionReaderTests {
    static let headPrefix = "HTTP/1.1 200 OK\r\n"
    static let trailerPrefix = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n"

    /// A field line (or lines) that is refused, the reason, and where in the section the offending byte is.
    static let refused: [(lines: String, reason: ResponseParseError.Reason, at: Int)] = [
        (" x: 1", .obsoleteLineFolding, 0),
        ("\tx: 1", .obsoleteLineFolding, 0),
        ("X: a\rb", .invalidHeaderValue, 4),
        ("X: a\r", .invalidHeaderValue, 4),
        ("X: 1\u{7F}", .invalidHeaderValue, 4),
        ("X: 1\u{0}2", .invalidHeaderValue, 4),
        ("X : 1", .whitespaceBeforeColon, 1),
        ("X\t: 1", .whitespaceBeforeColon, 1),
        ("X(: 1", .invalidHeaderName, 1),
        ("X\u{E9}: 1", .invalidHeaderName, 1),
        (": 1", .invalidHeaderName, 0),
        ("X", .missingColon, 0),
        ("A: 1\r\nX: 1\n", .bareLineFeed, 10),
        ("A: 1\r\n a\u{1}b", .invalidHeaderValue, 8),
        ("A: 1\r\n\t\u{7F}", .invalidHeaderValue, 7),
    ]

    @Test(arguments: refused)
    func aRefusedLineIsRefusedTheSameInTheHeadAndTheTrailers(lines: String, reason: ResponseParseError.Reason, at: Int) {
        let inHead = parseWhole(Self.headPrefix + lines + "\r\n\r\n")
        let inTrailers = parseWhole(Self.trailerPrefix + lines + "\r\n\r\n")
        #expect(errorReason(inHead) == reason)
        #expect(errorReason(inTrailers) == reason)
        #expect(errorOffset(inHead) == Self.headPrefix.utf8.count + at)
        #expect(errorOffset(inTrailers) == Self.trailerPrefix.utf8.count + at)
    }

    /// Field lines that are read, and the fields they give.
    static let accepted: [(lines: String, fields: HTTPHeaders)] = [
        ("X: a \r\n\t b", ["X": "a b"]),
        ("X: a\r\n \r\nY:2", ["X": "a", "Y": "2"]),
        ("X:\r\n b", ["X": "b"]),
        ("X: a\r\n b\r\n c", ["X": "a b c"]),
        ("X:  caf\u{E9} \t", ["X": "caf\u{E9}"]),
        ("!#$%&'*+-.^_`|~09Az: v", ["!#$%&'*+-.^_`|~09Az": "v"]),
        ("X: 1\r\nx: 2", ["X": "1", "x": "2"]),
    ]

    @Test(arguments: accepted)
    func anAcceptedLineGivesTheSameFieldsInTheHeadAndTheTrailers(lines: String, fields: HTTPHeaders) {
        let inHead = parseWhole(Self.headPrefix + lines + "\r\n\r\n")
        #expect(head(inHead)?.headers == fields)
        let inTrailers = parseWhole(Self.trailerPrefix + lines + "\r\n\r\n")
        #expect(inTrailers.dropFirst() == [.trailers(fields), .end(keepAlive: true)])
    }

    @Test func aLineThatNeverEndsIsRefusedAtTheLimitInBothSections() {
        let long = [UInt8]("X: " + String(repeating: "a", count: 100))
        var head = ResponseParser(limits: .init(maxHeadBytes: 64))
        head.feed([UInt8](Self.headPrefix) + long)
        #expect(throws: ResponseParseError(.headTooLarge(limit: 64), offset: 64)) { try head.next() }

        var trailers = ResponseParser(limits: .init(maxTrailerBytes: 64))
        trailers.feed([UInt8](Self.trailerPrefix))
        while (try? trailers.next()) != nil {}
        trailers.feed(long)
        let prefix = Self.trailerPrefix.utf8.count
        #expect(throws: ResponseParseError(.trailersTooLarge(limit: 64), offset: prefix + 64)) { try trailers.next() }
    }

    @Test func theReaderCountsTheSameBytesForEitherSection() {
        for (section, tooLarge) in [
            (FieldSectionReader.Section.head, ResponseParseError.Reason.headTooLarge(limit: 12)),
            (.trailers, .trailersTooLarge(limit: 12)),
        ] {
            // "A: 1\r\n" is 6 bytes, "B: 22\r\n" 7: the second line crosses 12 bytes at its 7th byte.
            let bytes = [UInt8]("A: 1\r\nB: 22\r\n\r\n")
            var reader = FieldSectionReader(section, maxBytes: 12, maxFieldCount: 10)
            var none = FieldSectionReader.NoObserver()
            let progress = bytes.withUnsafeBufferPointer { reader.read($0, from: 0, searchingFrom: 0, observer: &none) }
            guard case .failed(let reason, let at) = progress else {
                Issue.record("expected a failure, got \(progress)")
                continue
            }
            #expect(reason == tooLarge)
            #expect(at == 12)
        }
    }

    @Test func theReaderStopsAtAnIncompleteLineAndResumesFromIt() {
        var reader = FieldSectionReader(.trailers, maxBytes: 100, maxFieldCount: 10)
        var none = FieldSectionReader.NoObserver()
        let first = [UInt8]("A: 1\r\nB: 2")
        let stopped = first.withUnsafeBufferPointer { reader.read($0, from: 0, searchingFrom: 0, observer: &none) }
        guard case .incomplete(let lineStart) = stopped else {
            Issue.record("expected an incomplete line, got \(stopped)")
            return
        }
        #expect(lineStart == 6)
        #expect(reader.fields == ["A": "1"])
        #expect(reader.byteCount == 6)
        // The caller keeps the incomplete line and tells the reader where its LF search may resume.
        let rest = Array(first[lineStart...]) + [UInt8]("\r\n\r\nbody")
        let done = rest.withUnsafeBufferPointer { reader.read($0, from: 0, searchingFrom: 4, observer: &none) }
        guard case .complete(let next) = done else {
            Issue.record("expected the end of the section, got \(done)")
            return
        }
        #expect(Array(rest[next...]) == [UInt8]("body"))
        #expect(reader.fields == ["A": "1", "B": "2"])
        #expect(reader.byteCount == 14)
    }

    @Test func foldsAndFieldLinesAreCountedApart() {
        // Folds do not count against maxFieldCount; field lines do, in either section.
        for section in [FieldSectionReader.Section.head, .trailers] {
            var reader = FieldSectionReader(section, maxBytes: 1000, maxFieldCount: 1)
            var none = FieldSectionReader.NoObserver()
            let ok = [UInt8]("A: 1\r\n 2\r\n 3\r\n\r\n")
            let read = ok.withUnsafeBufferPointer { reader.read($0, from: 0, searchingFrom: 0, observer: &none) }
            guard case .complete = read else {
                Issue.record("expected the end of the section, got \(read)")
                continue
            }
            #expect(reader.fields == ["A": "1 2 3"])
            var second = FieldSectionReader(section, maxBytes: 1000, maxFieldCount: 1)
            let two = [UInt8]("A: 1\r\nB: 2\r\n\r\n")
            let refused = two.withUnsafeBufferPointer { second.read($0, from: 0, searchingFrom: 0, observer: &none) }
            guard case .failed(let reason, let at) = refused else {
                Issue.record("expected a failure, got \(refused)")
                continue
            }
            #expect(reason == .tooManyHeaders(limit: 1))
            #expect(at == 6)
        }
    }
}
