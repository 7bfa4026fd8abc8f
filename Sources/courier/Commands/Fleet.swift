internal import ArgumentParser
internal import CourierAuthorisers
internal import CourierCoordination
internal import CourierCore
internal import CourierKit
internal import CourierLint
internal import CourierPolicy
internal import Foundation
internal import Logging

extension CourierCommand {
    /// `courier fleet status --policy P`: what the fleet sharing a policy's coordination backend looks like now.
    struct Fleet: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Look at the fleet that shares a policy's coordination backend (Redis).",
            discussion: "More in docs/fleet.md.",
            subcommands: [Status.self]
        )

        /// `courier fleet status --policy P [--json] [--max-keys N]`
        struct Status: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Show the live instances and every fleet-scoped rate limit's state; writes nothing.",
                discussion: """
                    Reads the backend named by the policy's coordination section (secrets from the environment), \
                    without joining the fleet's live set. Exit status: 0 shown; 1 the policy has errors or no \
                    coordination section; 2 usage error or unreadable file; 69 the backend could not be read.
                    """
            )

            @Option(help: "The policy file whose coordination section names the backend.")
            var policy: String

            @Flag(help: "Print one JSON object instead of text.")
            var json = false

            @Option(help: "List at most this many rate-limit keys.")
            var maxKeys = 1_000

            func validate() throws {
                guard maxKeys > 0 else { throw ValidationError("--max-keys must be positive") }
            }

            func run() async throws {
                guard FileManager.default.fileExists(atPath: policy) else {
                    StandardError.write("courier fleet status: no such policy file: '\(policy)'")
                    throw ExitCode(LintExitStatus.usageOrIOError.rawValue)
                }
                let compilation = PolicyCompiler(registry: .standard).compile(file: policy)
                guard let graph = compilation.graph, !compilation.hasErrors else {
                    let problems = LintReport(files: compilation.files, diagnostics: compilation.diagnostics)
                    StandardError.write(TextFormatter().format(problems))
                    StandardError.write("courier fleet status: '\(policy)' does not compile (\(problems.summary))")
                    throw ExitCode(LintExitStatus.failure.rawValue)
                }
                guard let coordination = graph.coordination else {
                    StandardError.write("courier fleet status: '\(policy)' has no coordination section: its limits are per process")
                    throw ExitCode(LintExitStatus.failure.rawValue)
                }
                let link = FleetLink.make(coordination, secrets: .system(), logger: Logger(label: "courier", factory: { _ in SwiftLogNoOpLogHandler() }))
                let status: FleetStatus
                do {
                    status = try await link.status(maxKeys: maxKeys)
                } catch {
                    StandardError.write("courier fleet status: \(error.message)")
                    throw ExitCode(FetchExitCode.coordination)
                }
                print(json ? Self.json(status, backend: link.backend) : Self.text(status, backend: link.backend), terminator: "")
            }

            static func text(_ status: FleetStatus, backend: String) -> String {
                var out = "backend: \(backend)\n"
                out += "live instances: \(status.instances.count)\n"
                for instance in status.instances.sorted(by: { $0.id < $1.id }) {
                    out += "  \(instance.id)  heartbeat lapses in \(seconds(instance.lapsesIn))\n"
                }
                out += "fleet rate limits: \(status.rateLimits.count)\(status.complete ? "" : " (more not listed: --max-keys)")\n"
                for limit in status.rateLimits.sorted(by: { $0.endpointKey < $1.endpointKey }) {
                    var line = "  \(limit.endpointKey)"
                    if let rate = limit.requestsPerSecond, let burst = limit.burst {
                        line += "  \(String(format: "%g", rate)) req/s, burst \(burst)"
                    }
                    line += limit.nextAllowedIn > .zero ? "  next in \(seconds(limit.nextAllowedIn))" : "  next now"
                    if limit.pauseLeft > .zero { line += "  paused \(seconds(limit.pauseLeft)) (Retry-After)" }
                    out += line + "\n"
                }
                return out
            }

            static func json(_ status: FleetStatus, backend: String) -> String {
                var object: [String: Any] = ["backend": backend, "complete": status.complete]
                object["instances"] = status.instances.map { ["id": $0.id, "lapses_in_s": $0.lapsesIn.seconds] as [String: Any] }
                object["rate_limits"] = status.rateLimits.map { limit -> [String: Any] in
                    var entry: [String: Any] = [
                        "key": limit.key, "endpoint_key": limit.endpointKey, "settings": limit.settings,
                        "next_allowed_in_s": limit.nextAllowedIn.seconds, "pause_left_s": limit.pauseLeft.seconds,
                    ]
                    entry["requests_per_second"] = limit.requestsPerSecond
                    entry["burst"] = limit.burst
                    return entry
                }
                let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
                return String(decoding: data, as: UTF8.self) + "\n"
            }

            private static func seconds(_ duration: Duration) -> String {
                String(format: "%.3fs", duration.seconds)
            }
        }
    }
}
