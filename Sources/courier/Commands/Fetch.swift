internal import ArgumentParser
internal import CourierKit
internal import Foundation
internal import CourierCore
internal import CourierPolicy
internal import CourierTransport
internal import CourierAuthorisers

extension CourierCommand {
    /// `courier fetch`: a curl-like client on Courier's transport, or on a data loader built from a policy.
    struct Fetch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Fetch URLs with Courier's HTTP client (curl-like), optionally through a policy.",
            discussion: """
                Several URLs go through one client (or one data loader with --policy), one after another, or up \
                to N at a time with --parallel N. Bodies on standard output, messages and --json-report lines \
                always come out in the order the URLs were given, never interleaved (with --parallel, outputs \
                are held in memory until every URL before them is done).

                The i-th -o is for the i-th URL, as in curl; URLs beyond the last -o write to standard output, \
                and '-o -' means standard output. A file named by several -o options receives those bodies in \
                URL order. More -o options than URLs is a usage error. As in curl, a file is created only when \
                there is something to write (none after --fail refused a status or for a 304), and a transfer \
                that fails mid-body (a timeout, a broken connection) leaves no partial file.

                -d sends its text, or @FILE with CR and LF removed, as curl's -d does; several -d are joined with \
                '&'. --data-binary sends the bytes as given. Either way the method is POST unless -X says \
                otherwise and the Content-Type is application/x-www-form-urlencoded unless -H sets one.

                Redirects are followed, up to 10 (--max-redirs N); --max-redirs 0 follows none and delivers the \
                3xx itself.

                Without --policy a request is sent once (no retries), curl-like. With --policy FILE the policy \
                is compiled first (errors are printed as FILE:LINE:COLUMN and the exit status is 2, before any \
                request), and every URL goes through one data loader: the policy's rate limits, retries with \
                back-off and Retry-After, fallback addresses and authorisers apply, with ${env:...} secrets \
                taken from this process's environment. --max-time is then the request's total deadline, every \
                attempt and wait included, and the report's attempts and timings are the loader's. -v prints \
                the loader's decisions to standard error as they happen.

                --cache-dir DIR sends every URL through a data loader with an HTTP cache in DIR (created if \
                missing; RFC 9111, a private cache): with --policy, the services whose policy has cache: are \
                cached; without one, every host is, with the built-in cache defaults (5 minutes of freshness when \
                the server gives none, 10 MiB), and a request is still sent once. The report's "cache" says hit, \
                miss, revalidated, stale or coalesced (null without --cache-dir). --offline sends nothing and \
                answers only from the cache (a stale response too, unless it has must-revalidate or no-cache).

                Exit status (curl's numbers): 0 a response arrived (22 with --fail for status >= 400); \
                5 resolve the proxy, 6 resolve, 7 connect (to the proxy too), 56 the proxy refused the CONNECT \
                (a 407 says which authentication it wants), 97 SOCKS5 failure, 28 timeout, 35 TLS handshake, 60 certificate, 56 protocol or receive error, \
                47 too many redirects, 63 body too large, 67 authoriser failed (--policy), 75 offline and \
                nothing stored answers (--offline), 2 usage or policy error. With several URLs, the status is that of the first URL, in the order given, that failed.

                More in docs/fetch.md.
                """
        )

        @Argument(help: "The URLs to fetch, in order.")
        var urls: [String]

        @Option(
            name: .customShort("X"),
            help: "The request method (default GET, or POST with -d). Standard methods are upper-cased (-X get sends GET); others are sent as given: methods are case-sensitive."
        )
        var method: String?

        @Option(name: .customShort("H"), help: ArgumentHelp("A request header, 'Name: value'. Repeatable.", valueName: "header"))
        var headers: [String] = []

        @Option(
            name: [.customShort("d"), .customLong("data")],
            help: "Request body text, or @FILE (@- for standard input) sent with CR and LF removed. Repeatable: joined with '&'."
        )
        var data: [String] = []

        @Option(
            name: .customLong("data-binary"),
            help: "Request body bytes as given, or @FILE (@- for standard input) sent verbatim. Repeatable: joined with '&'."
        )
        var dataBinary: [String] = []

        @Option(
            name: .customShort("o"),
            help: ArgumentHelp(
                "Write the body of the next URL to FILE ('-' for standard output). Repeatable: the i-th -o is for the i-th URL.",
                valueName: "file"
            )
        )
        var outputs: [String] = []

        @Flag(name: [.customShort("i"), .customLong("include")], help: "Print the response head before the body.")
        var include = false

        @Flag(help: "Exit 22 (and print no body) when the status is 400 or more.")
        var fail = false

        @Option(name: .customLong("max-time"), help: "The longest the whole request may take, in seconds.")
        var maxTime: Double?

        @Option(
            name: .customLong("max-redirs"),
            help: ArgumentHelp("Follow at most N redirects (default 10); 0 follows none and delivers the 3xx.", valueName: "N")
        )
        var maxRedirects: Int?

        @Option(name: .customLong("json-report"), help: "Write one JSON line per URL to FILE, or - for standard error.")
        var jsonReport: String?

        @Option(help: ArgumentHelp("Fetch up to N URLs at a time (1 to 256).", valueName: "N"))
        var parallel = 1

        @Option(help: ArgumentHelp("Send every request through a data loader that applies this policy file.", valueName: "file"))
        var policy: String?

        @Option(
            name: .customLong("cache-dir"),
            help: ArgumentHelp("Keep an HTTP cache in DIR (created if missing) and answer from it when RFC 9111 allows.", valueName: "dir")
        )
        var cacheDirectory: String?

        @Flag(help: "Send nothing: answer only from --cache-dir's cache (exit 75 when nothing stored answers).")
        var offline = false

        @Flag(name: [.customShort("L"), .customLong("location")], help: "Accepted for curl users: redirects are followed by default (--max-redirs 0 turns that off).")
        var location = false

        @Option(help: ArgumentHelp(
            "Trust the CAs in this PEM file instead of the system's store (a policy service's own ca-file wins for its hosts).",
            valueName: "file"
        ))
        var cacert: String?

        @Option(help: ArgumentHelp(
            "Accept the server only if a key of its verified chain has this pin, sha256/<base64>. Repeatable.",
            valueName: "pin"
        ))
        var pin: [String] = []

        @Flag(name: [.customShort("k"), .long], help: "Do not verify the server's certificate or name (pins are still checked). Unsafe.")
        var insecure = false

        @Flag(name: [.customShort("v"), .long], help: "Print what happens to each request on standard error (the loader's trace with --policy).")
        var verbose = false

        @OptionGroup(title: "Proxies")
        var proxyOptions: ProxyOptions

        func validate() throws {
            for p in pin where TLSPolicy.Pin(p) == nil {
                throw ValidationError("--pin takes sha256/<base64 of 32 bytes>, not '\(p)'")
            }
            if let cacert, !FileManager.default.isReadableFile(atPath: cacert) {
                throw ValidationError("--cacert: cannot read '\(cacert)'")
            }
            if let maxTime, !(maxTime > 0) { throw ValidationError("--max-time takes a positive number of seconds") }
            if let maxRedirects, maxRedirects < 0 { throw ValidationError("--max-redirs takes 0 or more") }
            if let method, !HTTPMethod(commandLine: method).isValidToken { throw ValidationError("-X '\(method)' is not a valid HTTP method") }
            for h in headers {
                guard let option = HeaderOption(h) else {
                    throw ValidationError("-H takes 'Name: value' (or 'Name:' to send no Name, 'Name;' to send it empty), not '\(h)'")
                }
                switch option {
                case .remove(let name):
                    guard HTTPHeaders.isValidName(name) else { throw ValidationError("-H '\(h)': '\(name)' is not a valid header name") }
                case .send(let field):
                    guard HTTPHeaders.isValidName(field.name) else { throw ValidationError("-H '\(h)': '\(field.name)' is not a valid header name") }
                    guard HTTPHeaders.isValidValue(field.value) else { throw ValidationError("-H '\(field.name)': a header value may not hold CR, LF or NUL") }
                }
            }
            if !data.isEmpty && !dataBinary.isEmpty {
                throw ValidationError("give -d or --data-binary, not both (the order between them would be lost)")
            }
            if offline && cacheDirectory == nil { throw ValidationError("--offline answers from a cache: give --cache-dir DIR") }
            if urls.isEmpty { throw ValidationError("give at least one URL") }
            if !(1...256).contains(parallel) { throw ValidationError("--parallel takes a number from 1 to 256") }
            if outputs.count > urls.count {
                throw ValidationError("\(outputs.count) -o options for \(urls.count) URL\(urls.count == 1 ? "" : "s"): give at most one per URL")
            }
        }

        func run() async throws {
            // Over a file-size limit (ulimit -f) a write then fails with EFBIG, reported as a write error (exit 23),
            // instead of SIGXFSZ ending the process with a partial file.
            var ignore = sigaction()
            ignore.__sigaction_handler.sa_handler = SIG_IGN
            _ = try? SystemCall.blocking("sigaction") { sigaction(SIGXFSZ, &ignore, nil) }
            var template = try makeTemplate()
            template.proxySelection = proxyOptions.selection(environment: ProcessInfo.processInfo.environment)
            let reportSink = try jsonReport.map(ReportSink.init)
            var configuration = HTTPClientConfiguration()
            configuration.tls = tlsPolicy()
            if insecure {
                StandardError.write(
                    "courier fetch: WARNING: --insecure: server certificates and names are NOT verified; anyone on the path can read and change this traffic"
                )
            }
            // Requests Courier makes on its own (an authoriser's token requests) say who sends them too.
            configuration.userAgent = removedHeaders.contains("user-agent") ? nil : CourierCommand.userAgent
            if let maxRedirects { configuration.maxRedirects = maxRedirects }
            let client = HTTPClient(configuration: configuration)
            // The same limits for the data loader (with a policy or a cache), which follows redirects itself.
            var loaderConfiguration = DataLoaderService.Configuration(
                userAgent: removedHeaders.contains("user-agent") ? "" : CourierCommand.userAgent
            )
            loaderConfiguration.maxRedirects = configuration.maxRedirects
            loaderConfiguration.maxBodyBytes = configuration.maxBodyBytes
            loaderConfiguration.proxy = proxyOptions.server
            loaderConfiguration.noProxy = proxyOptions.noproxy
            // `-x ""` with a loader: the environment's proxies are off (a policy's `proxy:` still applies).
            if proxyOptions.proxy?.isEmpty == true { loaderConfiguration.usesEnvironmentProxies = false }
            defer { client.shutdown() }
            if let cacheDirectory {
                // Created with its parents: a cache commonly lives deep under ~/.cache. A failure shows in -v and the report.
                try? FileManager.default.createDirectory(atPath: cacheDirectory, withIntermediateDirectories: true)
            }
            let fetcher: any URLFetcher
            // A service in a fleet leaves its live set at the end.
            var fleetService: DataLoaderService?
            if let policy {
                // Compiled here rather than by DataLoaderService(policyFile:) so that -v can show the warnings of
                // a policy that compiles.
                let compilation = PolicyCompiler(registry: .standard).compile(file: policy)
                guard !compilation.hasErrors, let graph = compilation.graph else {
                    let error = PolicyLoadError(path: policy, diagnostics: compilation.diagnostics)
                    for diagnostic in error.diagnostics { StandardError.write(diagnostic.description) }
                    StandardError.write("courier fetch: \(error); no request was sent")
                    throw ExitCode(FetchExitCode.usage)
                }
                if verbose { for diagnostic in compilation.diagnostics { StandardError.write(diagnostic.description) } }
                var loading = loaderConfiguration
                loading.cacheDirectory = cacheDirectory
                let service = DataLoaderService(graph: graph, configuration: loading, client: client)
                if let coordination = graph.coordination {
                    try await startFleet(service, coordination)
                    fleetService = service
                }
                fetcher = LoaderFetcher(service: service, template: template, verbose: verbose, offline: offline)
            } else if let cacheDirectory {
                // No policy: curl-like (sent once, no retries), every host cached with the built-in defaults.
                var defaults = PolicyDefaults.builtIn
                defaults.retry.maxAttempts = 1
                var loading = loaderConfiguration
                loading.cacheDirectory = cacheDirectory
                loading.cachingUnclaimedHosts = .builtIn
                let service = DataLoaderService(graph: PolicyGraph(services: [], defaults: defaults), configuration: loading, client: client)
                fetcher = LoaderFetcher(service: service, template: template, verbose: verbose, offline: offline)
            } else {
                fetcher = DirectFetcher(client: client, template: template, showsProgress: parallel == 1, verbose: verbose)
            }
            let runner = FetchRunner(
                fetcher: fetcher, parallel: parallel, destinations: try makeDestinations(), reports: reportSink
            )
            let status = await runner.run(urls)
            await fleetService?.shutdown(gracePeriod: .zero)
            try? FileHandle.standardOutput.synchronize()
            if status != FetchExitCode.success { throw ExitCode(status) }
        }

        /// Starts the policy's coordination backend before the first request. When it cannot be started, the
        /// policy's `on-unavailable` decides: `closed` stops here (exit 69, nothing sent); `local` and `open` say so
        /// on standard error and fetch with the limits enforced as the policy says for a backend that is down.
        private func startFleet(_ service: DataLoaderService, _ coordination: CoordinationPolicy) async throws {
            do {
                try await service.start()
            } catch {
                switch coordination.onUnavailable {
                case .closed:
                    StandardError.write("courier fetch: \(error.message); the policy says on-unavailable: closed, so no request was sent")
                    throw ExitCode(FetchExitCode.coordination)
                case .local, .open:
                    StandardError.write("courier fetch: \(error.message); fetching with on-unavailable: \(coordination.onUnavailable.rawValue)")
                }
            }
        }

        /// The client's TLS settings from --cacert, --pin and --insecure (a relative CA path is taken from the
        /// current directory).
        private func tlsPolicy() -> TLSPolicy {
            let caFile = cacert.map { $0.hasPrefix("/") ? $0 : FileManager.default.currentDirectoryPath + "/" + $0 }
            return TLSPolicy(pins: pin.compactMap(TLSPolicy.Pin.init), caFile: caFile, verifiesPeer: !insecure)
        }

        /// What one `-H` says, as in curl: `Name: value` sends the field, `Name:` with nothing after the colon
        /// sends no `Name` at all (not even the one courier would add: `User-Agent`, `Content-Type`,
        /// `Accept-Encoding`), and `Name;` sends the field with an empty value.
        enum HeaderOption: Equatable {
            case send(HTTPHeaders.Field)
            case remove(String)

            init?(_ text: String) {
                if text.hasSuffix(";"), !text.contains(":") {
                    self = .send(HTTPHeaders.Field(name: String(text.dropLast()).trimmingCharacters(in: .whitespaces), value: ""))
                    return
                }
                guard let colon = text.firstIndex(of: ":") else { return nil }
                let name = String(text[..<colon]).trimmingCharacters(in: .whitespaces)
                let value = String(text[text.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
                self = value.isEmpty ? .remove(name.lowercased()) : .send(HTTPHeaders.Field(name: name, value: value))
            }
        }

        private var headerOptions: [HeaderOption] { headers.compactMap(HeaderOption.init) }

        /// The names `-H 'Name:'` removes (lower case).
        private var removedHeaders: Set<String> {
            Set(headerOptions.compactMap { if case .remove(let name) = $0 { return name } else { return nil } })
        }

        /// The request every URL is sent with, from -X, -H, -d, --data-binary and --max-time. With a body, the
        /// `Content-Type` curl adds unless -H gives one is added here; `User-Agent` is added by the client (its
        /// configuration says `courier/VERSION`, with or without a policy).
        private func makeTemplate() throws -> FetchRequestTemplate {
            let body = data.isEmpty ? try FetchBody.binary(dataBinary) : try FetchBody.data(data)
            let removed = removedHeaders
            var fields = HTTPHeaders(fields: headerOptions.compactMap { option -> HTTPHeaders.Field? in
                guard case .send(let field) = option, !removed.contains(field.name.lowercased()) else { return nil }
                return field
            })
            if body != nil, !fields.contains("content-type"), !removed.contains("content-type") {
                fields.add(name: "Content-Type", value: FetchBody.defaultContentType)
            }
            return FetchRequestTemplate(
                method: method.map { HTTPMethod(commandLine: $0) } ?? (body == nil ? .get : .post), headers: fields, body: body,
                maxTime: maxTime.map { .milliseconds(Int64(($0 * 1000).rounded(.up))) }, includeHead: include,
                failOnHTTPError: fail, decompress: !removed.contains("accept-encoding")
            )
        }

        /// One destination per URL: its -o file (one ``OutputFile`` per distinct path, checked before any request
        /// and created when the first byte is written) or standard output. Shared destinations are buffered when
        /// URLs run in parallel.
        private func makeDestinations() throws -> [BodyDestination] {
            var files: [String: OutputFile] = [:]
            var paths: [String?] = []
            for index in urls.indices {
                guard index < outputs.count, outputs[index] != "-" else {
                    paths.append(nil)
                    continue
                }
                let path = outputs[index]
                if files[path] == nil {
                    guard OutputFile.canWrite(path) else { throw ValidationError("cannot write \(path)") }
                    files[path] = OutputFile(path: path)
                }
                paths.append(path)
            }
            return paths.map { path in
                let shared = paths.lazy.filter { $0 == path }.count > 1
                return BodyDestination(target: path.flatMap { files[$0] }.map { .file($0) } ?? .standardOutput, buffered: parallel > 1 && shared)
            }
        }
    }
}
