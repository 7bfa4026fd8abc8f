// libFuzzer target for the response fields CourierHTTPCache parses: Cache-Control, Vary, Age and Expires.
// Built and run by Fuzz/run.sh (docs/fuzzing.md).
//
// The first input byte chooses the field (its two low bits: Cache-Control, Vary, Age, Expires); the rest, split
// at each LF, is that field's values, one field line each, as raw bytes (CR, NUL, invalid UTF-8 included).
// Properties, each a precondition (a finding when broken):
// - Cache-Control: the directives' canonical description parses back to the same directives and the same
//   description; reading the fields from HTTPHeaders or as strings agrees; every delta-seconds is within 0...2^31.
// - Vary: the names are sorted, unique, lower case, each `*` or a token; `", "`-joined, they parse back the same.
// - Age: the current age of a response just received is the Age value, within 0...2^31; written back as
//   digits it reads the same.
// - Expires: the freshness lifetime is never negative; a date that parses formats as an IMF-fixdate that parses
//   to the same instant and formats the same again.
// Crashes, ASan reports and hangs (-timeout) are findings.
internal import CourierCore
internal import CourierHTTPCache

private let fieldNames = ["Cache-Control", "Vary", "Age", "Expires"]

private func cacheControl(_ headers: HTTPHeaders) {
    let control = CacheControl(headers)
    let fromStrings = CacheControl(fieldValues: headers.values(for: "cache-control"))
    precondition(fromStrings == control, "headers and strings disagree")
    let deltas = [control.maxAge, control.sharedMaxAge, control.staleWhileRevalidate, control.staleIfError, control.minFresh]
    for case let seconds? in deltas {
        precondition((0...CacheControl.maximumDeltaSeconds).contains(seconds), "delta-seconds \(seconds)")
    }
    if case .seconds(let seconds) = control.maxStale {
        precondition((0...CacheControl.maximumDeltaSeconds).contains(seconds), "max-stale \(seconds)")
    }
    let text = control.description
    let again = CacheControl(fieldValues: [text])
    precondition(again == control, "'\(text)' parses to other directives: \(again) vs \(control)")
    precondition(again.description == text, "'\(text)' is described as '\(again.description)'")
}

private func vary(_ headers: HTTPHeaders) {
    let names = HTTPCacheKey.varyNames(of: headers)
    precondition(names == Array(Set(names)).sorted(), "names not sorted and unique: \(names)")
    for name in names {
        precondition(name == "*" || HTTPToken.isToken(name), "'\(name)' is not a token")
        precondition(!name.utf8.contains { $0 >= 0x41 && $0 <= 0x5A }, "'\(name)' is not lower case")
    }
    let again = HTTPCacheKey.varyNames(of: ["Vary": names.joined(separator: ", ")])
    precondition(again == names, "\(names) joined parses to \(again)")
}

private func age(_ headers: HTTPHeaders) {
    let age = Freshness.currentAge(headers: headers, requestTime: 0, responseTime: 0, now: 0)
    precondition(age >= 0 && age <= Double(CacheControl.maximumDeltaSeconds) && age == age.rounded(), "age \(age)")
    let written: HTTPHeaders = ["Age": String(Int64(age))]
    let again = Freshness.currentAge(headers: written, requestTime: 0, responseTime: 0, now: 0)
    precondition(again == age, "age \(age) written back reads \(again)")
}

private func expires(_ headers: HTTPHeaders) {
    var withDate = headers
    withDate.add(name: "Date", value: "Sun, 06 Nov 1994 08:49:37 GMT")
    let lifetime = Freshness.lifetime(
        status: 200, headers: withDate, control: CacheControl(), responseTime: 0, heuristicLifetime: 0
    )
    precondition(lifetime >= 0 && lifetime.isFinite, "lifetime \(lifetime)")
    guard let value = headers["Expires"], let instant = HTTPDate.parse(value) else { return }
    let text = HTTPDate.format(instant)
    let again = HTTPDate.parse(text)
    precondition(again == instant, "'\(value)' is \(instant), formatted '\(text)', which parses to \(String(describing: again))")
    precondition(HTTPDate.format(HTTPDate.parse(text) ?? .nan) == text, "'\(text)' formats differently")
}

/// One input through the harness: libFuzzer's `LLVMFuzzerTestOneInput`, reached through `FuzzTarget`.
func fuzzCacheHeaders(_ data: UnsafeBufferPointer<UInt8>) {
    guard let input = FuzzInput(data) else { return }
    let field = Int(input.control & 0x03)
    let name = Array(fieldNames[field].utf8)
    var headers = HTTPHeaders()
    name.withUnsafeBufferPointer { name in
        for line in input.payload.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            Array(line).withUnsafeBufferPointer { headers.add(nameBytes: name, valueBytes: $0) }
        }
    }
    switch field {
    case 0: cacheControl(headers)
    case 1: vary(headers)
    case 2: age(headers)
    default: expires(headers)
    }
}
