internal import CourierCore

/// What the answer to a `courier fetch -C` request means, as curl decides it: a `206` whose `Content-Range` starts
/// at the offset is appended; a `416` (the file is already whole, as far as the server can tell) or any answer
/// whose `Content-Length` is the offset itself means there is nothing left to fetch (exit 0, the file untouched);
/// anything else cannot continue the file ("HTTP server doesn't seem to support byte ranges", exit 33).
enum FetchResume {
    enum Verdict: Equatable {
        case append
        case complete
        case cannotResume
    }

    /// curl's message for ``Verdict/cannotResume``.
    static let message = "HTTP server doesn't seem to support byte ranges. Cannot resume."

    /// The verdict on a response (`status`, `headers`) to a request for the bytes from `offset` on (more than 0).
    static func judge(offset: Int64, status: Int, headers: HTTPHeaders) -> Verdict {
        if status == 206, let range = headers["Content-Range"], first(of: range) == offset { return .append }
        if status == 416 { return .complete }
        if headers["Content-Length"].flatMap({ Int64($0.trimmingHTTPWhitespace) }) == offset { return .complete }
        return .cannotResume
    }

    /// The verdict when it is not ``Verdict/append`` (nil: append the body as usual).
    static func verdict(offset: Int64, _ status: Int, _ headers: HTTPHeaders) -> Verdict? {
        let verdict = judge(offset: offset, status: status, headers: headers)
        return verdict == .append ? nil : verdict
    }

    /// A response with nothing to append: done (exit 0), or curl's exit 33 with its message; the file is untouched.
    static func outcome(_ verdict: Verdict, report: FetchReport) -> FetchOutcome {
        var outcome = FetchOutcome(report: report, exitStatus: FetchExitCode.success, end: .nothingToWrite)
        if verdict == .cannotResume {
            outcome.exitStatus = FetchExitCode.rangeError
            outcome.messages.append("courier fetch: \(message)")
        }
        return outcome
    }

    /// The first byte of a `Content-Range: bytes first-last/length`.
    private static func first(of range: String) -> Int64? {
        let value = range.trimmingHTTPWhitespace
        guard value.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = value.dropFirst("bytes ".count).trimmingHTTPWhitespace
        guard let dash = spec.firstIndex(of: "-") else { return nil }
        return Int64(spec[..<dash])
    }
}
