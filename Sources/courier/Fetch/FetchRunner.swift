internal import Foundation
internal import CourierCore

/// Runs the URLs of one `courier fetch` through one fetcher, up to `parallel` at a time, and writes what
/// became of each (kept output, messages, report line) in the order the URLs were given, whatever order they
/// finish in. With `parallel` 1 the URLs run one after another.
struct FetchRunner {
    let fetcher: any URLFetcher
    /// Requests in flight at most (at least 1).
    let parallel: Int
    /// One per URL.
    let destinations: [BodyDestination]
    let reports: ReportSink?

    /// Fetches every URL and returns the exit status: that of the first URL, in the order given, that asked for
    /// one, else 0.
    func run(_ urls: [String]) async -> Int32 {
        precondition(destinations.count == urls.count, "one destination per URL")
        var status = FetchExitCode.success
        var finished: [Int: FetchOutcome] = [:]
        var nextToWrite = 0
        let fetcher = self.fetcher
        let destinations = self.destinations

        await withTaskGroup(of: (Int, FetchOutcome).self) { group in
            var nextToStart = 0
            func startNext() {
                guard nextToStart < urls.count else { return }
                let index = nextToStart
                let text = urls[index]
                let destination = destinations[index]
                nextToStart += 1
                group.addTask {
                    guard let url = FetchURL.parse(text) else {
                        let error = CourierError(.policy, "not an absolute http or https URL, nor a data: or file: URL", url: text)
                        return (
                            index,
                            FetchOutcome(
                                report: FetchReport(url: text, error: error), exitStatus: FetchExitCode.usage, end: .failed,
                                messages: ["courier fetch: '\(text)' is not an absolute http or https URL, nor a data: or file: URL"]
                            )
                        )
                    }
                    let writer = BodyWriter(destination)
                    // With several URLs, -v lines say which URL they are about.
                    var outcome = await VerboseObserver.$prefix.withValue(urls.count > 1 ? "#\(index + 1) " : "") {
                        await fetcher.fetch(url, index: index, into: writer)
                    }
                    writer.finish(outcome.end)
                    outcome.keptOutput = writer.kept
                    // The report names the URL as given: an http+unix:// URL, not the http://localhost it is sent as.
                    if url.description != text, UnixSocketURL.parse(text) != nil { outcome.report.url = text }
                    return (index, outcome)
                }
            }
            for _ in 0..<max(1, parallel) { startNext() }
            for await (index, outcome) in group {
                finished[index] = outcome
                // Write every outcome whose predecessors are all written; the rest wait their turn.
                while let ready = finished.removeValue(forKey: nextToWrite) {
                    let destination = destinations[nextToWrite]
                    write(ready, to: destination)
                    // A body that arrived but could not be written is curl's write error.
                    let exit = ready.exitStatus == FetchExitCode.success && destination.hasFailed
                        ? FetchExitCode.writeError : ready.exitStatus
                    if status == FetchExitCode.success { status = exit }
                    nextToWrite += 1
                }
                startNext()
            }
        }
        return status
    }

    private func write(_ outcome: FetchOutcome, to destination: BodyDestination) {
        destination.write(outcome.keptOutput)
        destination.finish(outcome.end)
        for message in outcome.messages { StandardError.error(message) }
        reports?.write(outcome.report)
    }
}
