internal import ArgumentParser
internal import CourierHTTPCache
internal import Foundation
internal import CourierCache
internal import CourierCore

extension CourierCommand {
    /// `courier cache`: look inside a record store (`CourierCache`), check it, collect it, clear it.
    struct Cache: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Look inside a Courier record store: list, inspect, verify, collect garbage, clear.",
            discussion: """
                Exit status: 0 success; 1 ls, inspect or verify found a corrupt record (or inspect found none under \
                the key); 2 usage or I/O error (a directory that is not a cache, a failing system call). Times are \
                UTC. More in docs/cache.md.
                """,
            subcommands: [List.self, Inspect.self, Verify.self, CollectGarbage.self, Clear.self]
        )

        /// The store in `directory`, which must exist (a listing never creates a cache where there was none);
        /// `configure` adjusts its options (a collection's size cap).
        static func open(_ directory: String, configure: (inout RecordStoreOptions) -> Void = { _ in }) throws -> RecordStore {
            if let problem = FileAccess.directoryProblem(directory) {
                throw CommandFailure("courier cache: cannot open \(directory): \(problem)")
            }
            var options = RecordStoreOptions(directory: directory)
            configure(&options)
            do {
                return try RecordStore(options: options)
            } catch {
                StandardError.write("courier cache: \(error)")
                throw ExitCode(2)
            }
        }

        /// Runs a store operation, turning its typed error into a message and exit 2.
        static func attempt<T>(_ body: () async throws(CacheError) -> T) async throws -> T {
            do {
                return try await body()
            } catch {
                StandardError.write("courier cache: \(error)")
                throw ExitCode(2)
            }
        }

        /// Nanoseconds since the Unix epoch as ISO 8601 UTC, to the second.
        static func time(_ nanoseconds: Int64) -> String {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime]
            return formatter.string(from: Date(timeIntervalSince1970: Double(nanoseconds) / 1e9))
        }

        static func summaryLines(_ s: RecordSummary) -> [String] {
            [
                "key: \(s.key)", "file: \(s.fileName)", "size: \(s.fileSize) bytes (payload \(s.payloadSize))",
                "stored: \(time(s.storeTime))", "accessed: \(time(s.accessTime))",
                "ttl: \(s.ttl == .zero ? "sliding (the store's default expiry after the last access)" : DurationFormat.format(s.ttl))",
                "expires: \(time(s.expiryTime))\(s.isExpired ? " (expired)" : "")", "locks: \(s.lockCount)",
            ]
        }

        /// The HTTP cache's view of the record under `key` (nil for a record the HTTP cache did not file). Read
        /// without moving its access time.
        static func http(_ store: RecordStore, _ key: String) async -> HTTPRecordDescription? {
            guard let record = try? await store.peek(key) else { return nil }
            return HTTPRecordDescription(record: record, now: Date().timeIntervalSince1970)
        }

        /// Whether `key` is one of the HTTP cache's internal records, not a stored response: a URL's `Vary` index
        /// (``HTTPCacheKey/varyIndex``: the prefix, then a request's method and URL).
        static func isInternal(_ key: String) -> Bool {
            guard key.hasPrefix(varyIndexPrefix) else { return false }
            let request = key.dropFirst(varyIndexPrefix.count).split(separator: " ", maxSplits: 2)
            return request.count >= 2 && HTTPURL(String(request[1])) != nil
        }

        /// What ``HTTPCacheKey/varyIndex`` puts before a primary key.
        private static let varyIndexPrefix: String = {
            guard let url = HTTPURL("http://example.com/") else { return "vary " }
            let key = HTTPCacheKey(method: .get, url: url, identity: nil)
            return String(key.varyIndex.dropLast(key.primary.count))
        }()

        static func json(_ s: RecordSummary, http: HTTPRecordDescription?) -> String {
            var object: [String: Any] = [
                "key": s.key, "file": s.fileName, "size": s.fileSize, "payloadSize": s.payloadSize,
                "storedAt": time(s.storeTime), "accessedAt": time(s.accessTime), "expiresAt": time(s.expiryTime),
                "ttlSeconds": Double(s.ttl.components.seconds) + Double(s.ttl.components.attoseconds) / 1e18,
                "lockCount": s.lockCount, "fresh": http.map(\.isFresh) ?? !s.isExpired,
            ]
            if let http {
                object["http"] = [
                    "method": http.stored.method.rawValue, "url": http.stored.url, "status": http.stored.status,
                    "varied": Dictionary(http.stored.variedFields.map { ($0.name, $0.value) }) { $1 },
                    "credentialed": http.credentialed, "ageSeconds": http.age.rounded(.down),
                    "lifetimeSeconds": http.lifetime, "bodyBytes": http.stored.body.count,
                ] as [String: Any]
            }
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
            return String(decoding: data, as: UTF8.self)
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "ls",
                abstract: "One line per stored response or record: key, size, stored and expiry times, locks, fresh or stale.",
                discussion: """
                    Every record is read whole and its checksums checked; a corrupt one is listed as corrupt (with \
                    why), and the exit status is then 1. Nothing is changed.
                    """
            )

            /// The text form's first line, naming the columns.
            static let header = "KEY\tSIZE\tSTORED\tEXPIRES\tLOCKS\tSTATE\tSTATUS"
            @Argument(help: "The cache directory.") var directory: String
            @Flag(help: "One JSON object per line.") var json = false
            @Flag(help: "Also list the HTTP cache's internal records (each URL's Vary index).") var `internal` = false

            func run() async throws {
                let store = try Cache.open(directory)
                // Payloads too: a record whose payload is corrupt would otherwise be listed as a sound one.
                let verdicts = try await Cache.attempt { () throws(CacheError) in try await store.inspectAll(verifyingPayloads: true) }
                var rows: [RecordSummary] = []
                var corrupt: [(file: String, why: RecordCorruption)] = []
                for verdict in verdicts {
                    switch verdict {
                    case .intact(let summary): if `internal` || !Cache.isInternal(summary.key) { rows.append(summary) }
                    case .corrupt(let file, let why): corrupt.append((file, why))
                    }
                }
                if !json { print(Self.header) }
                for s in rows.sorted(by: { $0.key < $1.key }) {
                    let http = await Cache.http(store, s.key)
                    if json {
                        print(Cache.json(s, http: http))
                    } else if let http {
                        // An HTTP response: the request it answers, and its freshness by RFC 9111 (not the record's
                        // expiry, which keeps stale responses a while longer for revalidation and offline use).
                        print("\(http.request)\t\(s.fileSize)\t\(Cache.time(s.storeTime))\t\(Cache.time(s.expiryTime))\t\(s.lockCount)\t\(http.isFresh ? "fresh" : "stale")\t\(http.stored.status)")
                    } else {
                        print("\(s.key)\t\(s.fileSize)\t\(Cache.time(s.storeTime))\t\(Cache.time(s.expiryTime))\t\(s.lockCount)\t\(s.isExpired ? "stale" : "fresh")")
                    }
                }
                // A corrupt file's key and times cannot be trusted: it is named by its file.
                for (file, why) in corrupt.sorted(by: { $0.file < $1.file }) {
                    if json {
                        print(#"{"corrupt":"\#(why)","file":"\#(file)"}"#)
                    } else {
                        print("\(file)\t-\t-\t-\t-\tcorrupt (\(why))")
                    }
                }
                guard corrupt.isEmpty else {
                    fflush(nil)
                    StandardError.write(
                        "courier cache: \(corrupt.count) corrupt record\(corrupt.count == 1 ? "" : "s") (a load or courier cache gc removes \(corrupt.count == 1 ? "it" : "them"))"
                    )
                    throw ExitCode(1)
                }
            }
        }

        struct Inspect: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "A record's header fields and its checksums' verdict (the payload is read and checked, not changed)."
            )
            @Argument(help: "The cache directory.") var directory: String
            @Argument(help: "The record's key, or a URL whose stored GET response to show (without credentials or Vary).")
            var key: String

            func run() async throws {
                let store = try Cache.open(directory)
                var key = self.key
                var verdict = try await Cache.attempt { () throws(CacheError) in try await store.inspect(key) }
                if verdict == nil, let url = HTTPURL(key) {
                    key = HTTPCacheKey(method: .get, url: url, identity: nil).primary
                    verdict = try await Cache.attempt { () throws(CacheError) in try await store.inspect(key) }
                }
                switch verdict {
                case nil:
                    StandardError.write("courier cache: no record under '\(key)'")
                    throw ExitCode(1)
                case .corrupt(let file, let why)?:
                    print("file: \(file)\nchecksums: corrupt (\(why))")
                    throw ExitCode(1)
                case .intact(let summary)?:
                    for line in Cache.summaryLines(summary) { print(line) }
                    print("checksums: header and payload intact")
                    if let http = await Cache.http(store, key) {
                        print("request: \(http.request)\(http.credentialed ? " (filed under a requester's identity)" : "")")
                        print("freshness: \(http.isFresh ? "fresh" : "stale"), age \(Int(http.age))s of a \(Int(http.lifetime))s lifetime")
                        print("response: \(http.stored.status) \(http.stored.reason)")
                        for field in http.stored.headers { print("  \(field.name): \(field.value)") }
                        print("body: \(http.stored.body.count) bytes")
                    }
                }
            }
        }

        struct Verify: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Check every record whole; exit 1 with a list when any is corrupt (nothing is changed)."
            )
            @Argument(help: "The cache directory.") var directory: String

            func run() async throws {
                let store = try Cache.open(directory)
                let verdicts = try await Cache.attempt { () throws(CacheError) in try await store.inspectAll(verifyingPayloads: true) }
                var corrupt = 0
                for case .corrupt(let file, let why) in verdicts {
                    corrupt += 1
                    print("corrupt: \(file): \(why)")
                }
                print("\(verdicts.count) file\(verdicts.count == 1 ? "" : "s") checked, \(corrupt) corrupt")
                if corrupt > 0 { throw ExitCode(1) }
            }
        }

        struct CollectGarbage: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "gc", abstract: "Collect garbage now: expired and corrupt records, then the oldest beyond --max-size."
            )
            @Argument(help: "The cache directory.") var directory: String
            @Option(help: ArgumentHelp("Evict least recently used unlocked records beyond this size (e.g. 10MiB).", valueName: "size"))
            var maxSize: String?
            @Flag(help: "Also read every record whole and remove those whose payload checksum fails.")
            var verifyPayloads = false

            func validate() throws {
                if let maxSize, DurationFormat.parseSize(maxSize) == nil {
                    throw ValidationError("--max-size takes a size such as 512KiB or 10MiB, not '\(maxSize)'")
                }
            }

            func run() async throws {
                let store = try Cache.open(directory) { $0.sizeCap = maxSize.flatMap(DurationFormat.parseSize) }
                let report = try await Cache.attempt { () throws(CacheError) in
                    try await store.collectGarbage(verifyingPayloads: verifyPayloads)
                }
                print(
                    "removed \(report.expired) expired, \(report.corrupt) corrupt, \(report.evicted) evicted, "
                        + "\(report.temporaryFiles) abandoned temporary file\(report.temporaryFiles == 1 ? "" : "s"); "
                        + "\(report.bytesFreed) bytes freed"
                )
            }
        }

        struct Clear: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Remove every record, locked ones included.")
            @Argument(help: "The cache directory.") var directory: String

            func run() async throws {
                let store = try Cache.open(directory)
                let removed = try await Cache.attempt { () throws(CacheError) in
                    try await store.wipeUnlocked() + store.wipeLocked()
                }
                print("removed \(removed) record\(removed == 1 ? "" : "s")")
            }
        }
    }
}
