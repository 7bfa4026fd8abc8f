import ArgumentParser
import CourierKit
import Foundation

extension CourierCommand {
    /// `courier fetch`: a curl-like client on Courier's transport.
    struct Fetch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Fetch URLs with Courier's HTTP client (curl-like).",
            discussion: """
                Exit status (curl's numbers): 0 a response arrived (22 with --fail for status >= 400);
                6 resolve, 7 connect, 28 timeout, 35 TLS handshake, 60 certificate, 56 protocol or receive error,
                47 too many redirects, 63 body too large, 2 usage. With several URLs, the status is that of the
                first URL that failed.
                """
        )

        @Argument(help: "The URLs to fetch, in order.")
        var urls: [String]

        @Option(name: .customShort("X"), help: "The request method (default GET, or POST with -d).")
        var method: String?

        @Option(name: .customShort("H"), help: ArgumentHelp("A request header, 'Name: value'. Repeatable.", valueName: "header"))
        var headers: [String] = []

        @Option(name: [.customShort("d"), .customLong("data")], help: "A request body, or @FILE to send a file.")
        var data: String?

        @Option(name: .customShort("o"), help: "Write the body to FILE instead of standard output.")
        var output: String?

        @Flag(name: [.customShort("i"), .customLong("include")], help: "Print the response head before the body.")
        var include = false

        @Flag(help: "Exit 22 (and print no body) when the status is 400 or more.")
        var fail = false

        @Option(name: .customLong("max-time"), help: "The longest the whole request may take, in seconds.")
        var maxTime: Double?

        @Option(name: .customLong("json-report"), help: "Write one JSON line per URL to FILE, or - for standard error.")
        var jsonReport: String?

        func validate() throws {
            if let maxTime, !(maxTime > 0) { throw ValidationError("--max-time takes a positive number of seconds") }
            for h in headers where !h.contains(":") { throw ValidationError("-H takes 'Name: value', not '\(h)'") }
            if urls.isEmpty { throw ValidationError("give at least one URL") }
        }

        func run() async throws {
            let body: [UInt8]?
            if let data {
                if data.hasPrefix("@") {
                    guard let contents = FileManager.default.contents(atPath: String(data.dropFirst())) else {
                        throw ValidationError("cannot read \(data.dropFirst())")
                    }
                    body = Array(contents)
                } else {
                    body = Array(data.utf8)
                }
            } else {
                body = nil
            }
            var fields = HTTPHeaders()
            for h in headers {
                let colon = h.firstIndex(of: ":")!
                fields.add(
                    name: String(h[..<colon]).trimmingCharacters(in: .whitespaces),
                    value: String(h[h.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
                )
            }
            let method = HTTPMethod(self.method ?? (body == nil ? "GET" : "POST"))
            var timeouts = TimeoutPolicy.builtIn
            if let maxTime { timeouts.total = .milliseconds(Int64(maxTime * 1000)) }

            let reportSink = try jsonReport.map(ReportSink.init)
            var output: FileHandle = .standardOutput
            if let path = self.output {
                guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
                    throw ValidationError("cannot write \(path)")
                }
                output = handle
            }
            let client = HTTPClient()
            defer { client.shutdown() }
            var status = FetchExitCode.success
            for text in urls {
                guard let url = HTTPURL(text) else {
                    StandardError.write("courier fetch: '\(text)' is not an absolute http or https URL")
                    reportSink?.write(FetchReport(
                        url: text, response: nil, bodyBytes: 0, digest: nil, metrics: RequestMetrics(), total: .zero,
                        error: CourierError(.policy, "not an absolute http or https URL")
                    ))
                    if status == 0 { status = FetchExitCode.usage }
                    continue
                }
                let request = HTTPRequest(method: method, url: url, headers: fields, body: body.map { .bytes($0) } ?? .none, timeouts: timeouts)
                let code = await fetchOne(request, client: client, output: output, report: reportSink)
                if status == 0 { status = code }
            }
            try? output.synchronize()
            if status != 0 { throw ExitCode(status) }
        }

        /// Fetches one URL, streams its body out, and returns its exit status.
        private func fetchOne(_ request: HTTPRequest, client: HTTPClient, output: FileHandle, report: ReportSink?) async -> Int32 {
            let start = ContinuousClock.now
            var response: StreamingResponse?
            var hasher = SHA256()
            var bodyBytes = 0
            do {
                let r = try await client.stream(request)
                response = r
                let failed = fail && r.status >= 400
                if include && !failed {
                    var head = "HTTP/1.1 \(r.status) \(r.head.reason)\r\n"
                    for field in r.headers { head += "\(field.name): \(field.value)\r\n" }
                    output.write(Data((head + "\r\n").utf8))
                }
                let progress = ProgressBar(expectedBytes: r.headers["content-length"].flatMap { Int($0) })
                while let chunk = try await r.body.nextChunk() {
                    hasher.update(chunk)
                    bodyBytes += chunk.count
                    progress.advance(by: chunk.count)
                    if !failed { output.write(Data(chunk)) }
                }
                progress.finish()
                report?.write(FetchReport(
                    url: request.url.description, response: r, bodyBytes: bodyBytes, digest: hasher.finalize(),
                    metrics: r.body.metrics, total: ContinuousClock.now - start, error: nil
                ))
                if failed {
                    StandardError.write("courier fetch: the server answered \(r.status) (\(request.url))")
                    return FetchExitCode.httpError
                }
                return FetchExitCode.success
            } catch {
                StandardError.write("courier fetch: \(error)")
                report?.write(FetchReport(
                    url: request.url.description, response: response, bodyBytes: bodyBytes, digest: nil,
                    metrics: response?.body.metrics ?? RequestMetrics(), total: ContinuousClock.now - start, error: error
                ))
                return FetchExitCode.code(for: error.kind)
            }
        }
    }
}

/// Where `--json-report` lines go: a file, or standard error for `-`.
final class ReportSink {
    private let handle: FileHandle

    init(_ path: String) throws {
        if path == "-" {
            handle = .standardError
        } else {
            guard FileManager.default.createFile(atPath: path, contents: nil), let h = FileHandle(forWritingAtPath: path) else {
                throw ValidationError("cannot write the report to \(path)")
            }
            handle = h
        }
    }

    func write(_ report: FetchReport) {
        handle.write(Data((report.jsonLine() + "\n").utf8))
    }
}
