internal import ArgumentParser
internal import CourierKit
internal import Foundation
internal import CourierCore
internal import CourierPolicy
internal import CourierTransport
internal import CourierAuthorisers
internal import CourierLint

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

                data: URLs (RFC 2397) and file:// URLs (read-only: any file this user can read, as curl does; no \
                directory listing) are answered without a network, with -o, -i and --json-report as for http. \
                -r/--range RANGE sends Range: bytes=RANGE (curl's syntax: 0-499, 500-, -500, or a comma list) to \
                http(s) and file: URLs; a 206 is written as the answer, a 416 is the server's refusal.

                Exit status (curl's numbers): 0 a response arrived (22 with --fail for status >= 400); \
                5 resolve the proxy, 6 resolve, 7 connect (to the proxy too), 56 the proxy refused the CONNECT \
                (a 407 says which authentication it wants), 97 SOCKS5 failure, 28 timeout, 35 TLS handshake, 60 certificate, 56 protocol or receive error, \
                47 too many redirects, 63 body too large, 67 authoriser failed (--policy), 75 offline and \
                nothing stored answers (--offline), 58 the client certificate or key cannot be used (--cert, --key, \
                --pass), 37 a data: or file: URL could not be read (a missing file, a directory, bad base64), 2 usage or policy error. With several URLs, the status is that of the first URL, in the order given, that failed.

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
            name: [.customShort("F"), .customLong("form")],
            help: ArgumentHelp(
                "A multipart/form-data part: name=value, name=@FILE (the file, streamed; ;type=MIME and ;filename=NAME may follow) or name=<FILE (its contents as a field). Repeatable; implies POST.",
                valueName: "part"
            )
        )
        var form: [String] = []

        @Option(
            name: .customShort("o"),
            help: ArgumentHelp(
                "Write the body of the next URL to FILE ('-' for standard output). Repeatable: the i-th -o is for the i-th URL.",
                valueName: "file"
            )
        )
        var outputs: [String] = []

        @Flag(
            name: [.customShort("O"), .customLong("remote-name")],
            help: "Write the body to a file in the current directory named after the URL's last path segment. Repeatable: one per URL, as -o."
        )
        var remoteNames: Int

        @Flag(name: [.customShort("i"), .customLong("include")], help: "Print the response head before the body.")
        var include = false

        @Flag(name: [.customShort("I"), .customLong("head")], help: "Send HEAD and print the response head only.")
        var headOnly = false

        @Flag(name: [.customShort("f"), .customLong("fail")], help: "Exit 22 (and print no body) when the status is 400 or more.")
        var fail = false

        @Flag(name: [.customShort("s"), .customLong("silent")], help: "Print no progress bar and no error messages (unless -S).")
        var silent = false

        @Flag(name: [.customShort("S"), .customLong("show-error")], help: "With -s, still print error messages.")
        var showError = false

        // Unconditional: '--max-time -1' reaches validate(), which says what is wrong, instead of argument-parser
        // reading '-1' as an option and reporting a missing value.
        @Option(
            name: .customLong("max-time"), parsing: .unconditional,
            help: ArgumentHelp("The longest the whole request may take, in seconds; 0 means no limit, as in curl.", valueName: "seconds")
        )
        var maxTime: Double?

        @Option(
            name: .customLong("max-redirs"), parsing: .unconditional,
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

        @Option(name: [.customShort("E"), .customLong("cert")], help: ArgumentHelp(
            "Present this PEM client certificate (then any intermediates) when a server asks for one; FILE:PASSWORD gives the key's password as curl's does ('\\:' for a colon in FILE).",
            valueName: "file[:password]"
        ))
        var cert: String?

        @Option(help: ArgumentHelp("The client certificate's PEM private key (default: in the --cert file).", valueName: "file"))
        var key: String?

        @Option(name: .customLong("pass"), help: ArgumentHelp("The password of an encrypted --key.", valueName: "phrase"))
        var keyPassword: String?

        @Option(name: .customLong("unix-socket"), help: ArgumentHelp(
            "Connect to this Unix domain socket instead of the URL's host; the Host field is still the URL's. (An http+unix://%2Fpath%2Fto.sock/... URL names its socket itself.)",
            valueName: "path"
        ))
        var unixSocket: String?

        @Flag(name: [.customShort("v"), .long], help: "Print what happens to each request on standard error (the loader's trace with --policy).")
        var verbose = false

        @OptionGroup(title: "Proxies")
        var proxyOptions: ProxyOptions

        @OptionGroup(title: "Resuming")
        var resumeOptions: ResumeOptions

        @OptionGroup
        var rangeOption: RangeOption

        func validate() throws {
            for p in pin where TLSPolicy.Pin(p) == nil {
                throw ValidationError("--pin takes sha256/<base64 of 32 bytes>, not '\(p)'")
            }
            if let maxTime, !(maxTime >= 0) || !maxTime.isFinite {
                let given = maxTime.isFinite && maxTime == maxTime.rounded() && abs(maxTime) < 1e15 ? String(Int(maxTime)) : String(maxTime)
                throw ValidationError("--max-time takes a number of seconds, 0 or more (0: no limit), not \(given)")
            }
            if headOnly && (!data.isEmpty || !dataBinary.isEmpty) {
                throw ValidationError("-I sends HEAD, which has no body: give -I or -d/--data-binary, not both")
            }
            if remoteNames > 0 && !outputs.isEmpty {
                throw ValidationError("give -o or -O, not both (the order between them would be lost)")
            }
            if remoteNames > urls.count {
                throw ValidationError("\(remoteNames) -O options for \(urls.count) URL\(urls.count == 1 ? "" : "s"): give at most one per URL")
            }
            if let maxRedirects, maxRedirects < 0 { throw ValidationError("--max-redirs takes 0 or more, not \(maxRedirects)") }
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
            if !form.isEmpty && (!data.isEmpty || !dataBinary.isEmpty || headOnly) {
                throw ValidationError("-F sends a multipart form: give it without -d, --data-binary or -I")
            }
            if offline && cacheDirectory == nil { throw ValidationError("--offline answers from a cache: give --cache-dir DIR") }
            if cert == nil, key != nil || keyPassword != nil { throw ValidationError("--key and --pass go with --cert FILE") }
            if unixSocket != nil || urls.contains(where: { UnixSocketURL.parse($0) != nil }), policy != nil || cacheDirectory != nil {
                throw ValidationError(
                    "Unix sockets (--unix-socket, http+unix:// URLs) are for requests without --policy or --cache-dir; in a policy, give the service connect-to: unix:/path"
                )
            }
            if urls.isEmpty { throw ValidationError("give at least one URL") }
            if !(1...256).contains(parallel) { throw ValidationError("--parallel takes a number from 1 to 256") }
            if rangeOption.range != nil && resumeOptions.offset != nil {
                throw ValidationError("-r asks for a range and -C continues a file from an offset: give one of them")
            }
            try resumeOptions.validate(hasFiles: remoteNames >= urls.count || outputs.count >= urls.count && !outputs.contains("-"))
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
            // -s: no error text from here on (the exit status still says what happened), unless -S.
            StandardError.silence(quiet)
            if let cacert, let problem = FileAccess.readProblem(cacert) {
                throw CommandFailure("courier fetch: --cacert: cannot read \(cacert): \(problem)")
            }
            var template = try makeTemplate()
            template.proxySelection = proxyOptions.selection(environment: ProcessInfo.processInfo.environment)
            template.continueAt = resumeOptions.offset
            let reportSink = try jsonReport.map(ReportSink.init)
            var configuration = HTTPClientConfiguration()
            configuration.tls = tlsPolicy()
            if insecure {
                StandardError.error(
                    "courier fetch: WARNING: --insecure: server certificates and names are NOT verified; anyone on the path can read and change this traffic"
                )
            }
            // Requests Courier makes on its own (an authoriser's token requests) say who sends them too.
            configuration.userAgent = removedHeaders.contains("user-agent") ? nil : CourierCommand.userAgent
            if let maxRedirects { configuration.maxRedirects = maxRedirects }
            // data: and file: URLs as curl reads them: the person at the terminal can read those files anyway.
            configuration.protocols = FetchURL.protocols
            // -v: curl's connection, TLS and head lines, with or without a policy (the loader uses this client).
            if verbose { configuration.exchangeObserver = VerboseObserver() }
            let client = HTTPClient(configuration: configuration)
            // The same limits for the data loader (with a policy or a cache), which follows redirects itself.
            var loaderConfiguration = DataLoaderService.Configuration(
                userAgent: removedHeaders.contains("user-agent") ? "" : CourierCommand.userAgent
            )
            loaderConfiguration.maxRedirects = configuration.maxRedirects
            loaderConfiguration.maxBodyBytes = configuration.maxBodyBytes
            loaderConfiguration.protocols = configuration.protocols
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
                    // The lines `courier lint` prints, suggestions included.
                    StandardError.write(TextFormatter().format(LintReport(files: compilation.files, diagnostics: compilation.diagnostics)))
                    StandardError.write("courier fetch: \(error); no request was sent")
                    throw ExitCode(FetchExitCode.usage)
                }
                if verbose {
                    StandardError.write(TextFormatter().format(LintReport(files: compilation.files, diagnostics: compilation.diagnostics)))
                }
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
                fetcher = DirectFetcher(client: client, template: template, showsProgress: parallel == 1 && !silent, verbose: verbose)
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
                    StandardError.error("courier fetch: \(error.message); the policy says on-unavailable: closed, so no request was sent")
                    throw ExitCode(FetchExitCode.coordination)
                case .local, .open:
                    StandardError.write("courier fetch: \(error.message); fetching with on-unavailable: \(coordination.onUnavailable.rawValue)")
                }
            }
        }

        /// The client's TLS settings from --cacert, --pin, --insecure, --cert, --key and --pass (relative paths are
        /// taken from the current directory).
        private func tlsPolicy() -> TLSPolicy {
            func absolute(_ path: String) -> String { path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path }
            let identity = cert.map { option -> ClientIdentity in
                let (file, password) = Self.splitCertificateOption(option)
                return ClientIdentity(certificateFile: absolute(file), keyFile: key.map(absolute), keyPassword: keyPassword ?? password)
            }
            return TLSPolicy(
                pins: pin.compactMap(TLSPolicy.Pin.init), caFile: cacert.map(absolute), verifiesPeer: !insecure, clientIdentity: identity
            )
        }

        /// curl's `--cert FILE:PASSWORD`: the file up to the first colon that no backslash escapes (`\:` is a colon
        /// in the file's name), the password after it.
        static func splitCertificateOption(_ text: String) -> (file: String, password: String?) {
            var file = ""
            var index = text.startIndex
            while index < text.endIndex {
                let character = text[index]
                let next = text.index(after: index)
                if character == "\\", next < text.endIndex, text[next] == ":" {
                    file.append(":")
                    index = text.index(after: next)
                    continue
                }
                if character == ":" { return (file, String(text[next...])) }
                file.append(character)
                index = next
            }
            return (file, nil)
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

        /// `-s` without `-S`: no error messages.
        private var quiet: Bool { silent && !showError }

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
            let multipart = try FetchForm.make(form)
            let formBody: RequestBodyStream?
            do {
                formBody = try multipart?.bodyStream()
            } catch {
                throw CommandFailure("courier fetch: \(error)")
            }
            let removed = removedHeaders
            var fields = HTTPHeaders(fields: headerOptions.compactMap { option -> HTTPHeaders.Field? in
                guard case .send(let field) = option, !removed.contains(field.name.lowercased()) else { return nil }
                return field
            })
            if body != nil, !fields.contains("content-type"), !removed.contains("content-type") {
                fields.add(name: "Content-Type", value: FetchBody.defaultContentType)
            }
            // A form's Content-Type carries its boundary: it replaces one -H gave, as curl's -F does.
            if let multipart { fields.replaceOrAdd(name: "Content-Type", value: multipart.contentType) }
            // -r: curl's byte ranges, sent as given (over a -H Range).
            if let range = rangeOption.fieldValue { fields.replaceOrAdd(name: "Range", value: range) }
            // -I sends HEAD (unless -X names another method, as in curl) and prints the head; 0 is no limit.
            let standard: HTTPMethod = headOnly ? .head : body == nil && multipart == nil ? .get : .post
            return FetchRequestTemplate(
                method: method.map { HTTPMethod(commandLine: $0) } ?? standard, headers: fields, body: body,
                maxTime: maxTime.flatMap { $0 == 0 ? nil : .milliseconds(Int64(($0 * 1000).rounded(.up))) },
                includeHead: include || headOnly, failOnHTTPError: fail, decompress: !removed.contains("accept-encoding"),
                unixSockets: urls.map { UnixSocketURL.parse($0)?.socketPath ?? unixSocket }, headOnly: headOnly,
                formBody: formBody
            )
        }

        /// One destination per URL: its -o file (one ``OutputFile`` per distinct path, checked before any request
        /// and created when the first byte is written) or standard output. Shared destinations are buffered when
        /// URLs run in parallel.
        private func makeDestinations() throws -> [BodyDestination] {
            var files: [String: OutputFile] = [:]
            var paths: [String?] = []
            let outputs = try remoteNames > 0 ? urls.prefix(remoteNames).map(RemoteName.fileName) : self.outputs
            for index in urls.indices {
                guard index < outputs.count, outputs[index] != "-" else {
                    paths.append(nil)
                    continue
                }
                let path = outputs[index]
                if files[path] == nil {
                    if let problem = FileAccess.writeProblem(path) {
                        throw CommandFailure("courier fetch: cannot write \(path): \(problem)")
                    }
                    files[path] = OutputFile(path: path, appending: resumeOptions.offset != nil)
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
