// libFuzzer target for CourierCore's HTTPURL and CourierTransport's RetryAfter. Built and run by Fuzz/run.sh
// (docs/fuzzing.md).
//
// The first input byte chooses the mode; the rest is text (invalid UTF-8 replaced).
// - URL: every URL that parses has a description that parses back to the same URL (and to the same
//   description); its Host header and request target hold no space or control character; a reference
//   (after the first newline) resolved against it gives a URL that round-trips too. The same holds for the
//   parser of protocol plugins' URLs (`HTTPURL(anyScheme:)`), which agrees with the strict one on every http(s) URL.
// - Retry-After: a delay is never negative, the same value gives the same delay, and an HTTP-date is
//   measured exactly: ten seconds before it, the delay is ten seconds.
internal import CourierCore
internal import CourierTransport

private func roundTrips(_ url: HTTPURL, anyScheme: Bool = false) {
    let text = url.description
    guard let again = anyScheme ? HTTPURL(anyScheme: text) : HTTPURL(text) else { preconditionFailure("'\(text)' does not parse again") }
    precondition(again == url, "'\(text)' parses to another URL")
    precondition(again.description == text, "'\(text)' is described as '\(again.description)'")
    for field in [url.hostHeader, url.requestTarget] {
        precondition(!field.utf8.contains { $0 <= 0x20 || $0 == 0x7F }, "a space or control character in '\(field)'")
    }
}

/// One input through the harness: libFuzzer's `LLVMFuzzerTestOneInput`, reached through `FuzzTarget`.
func fuzzURL(_ data: UnsafeBufferPointer<UInt8>) {
    guard let input = FuzzInput(data) else { return }
    let text = input.text
    if input.control & 1 == 0 {
        let (base, reference) = text.firstIndex(of: "\n").map { (String(text[..<$0]), String(text[text.index(after: $0)...])) } ?? (text, nil)
        if let any = HTTPURL(anyScheme: base) {
            precondition(HTTPURL(base) == (any.isHTTP ? any : nil), "'\(base)': the two parsers disagree on an http(s) URL")
            roundTrips(any, anyScheme: true)
            if let reference, let resolved = any.resolving(reference) { roundTrips(resolved, anyScheme: true) }
        }
        guard let url = HTTPURL(base) else { return }
        roundTrips(url)
        if let reference, let resolved = url.resolving(reference) { roundTrips(resolved) }
    } else {
        let now = 1_700_000_000.0
        let delay = RetryAfter.delay(text, now: now)
        if let delay { precondition(delay >= .zero, "a negative delay for '\(text)'") }
        precondition(RetryAfter.delay(text, now: now) == delay, "the same value gave another delay")
        if let date = RetryAfter.httpDate(Substring(text)) {
            precondition(RetryAfter.delay(text, now: date - 10) == .seconds(10), "'\(text)' is not ten seconds away")
        }
    }
}
