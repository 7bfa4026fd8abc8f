internal import CourierKit
internal import Foundation
internal import Synchronization
internal import CourierCore

/// Prints the demo's live trace: the loader's decisions (``LoaderEvent``, from the service's trace observer) and
/// what the upstream saw (``UpstreamRecord``), one line each, as they happen, with the time since the demo
/// started and the request's number. Keeps the events for the demo's checks.
///
/// Lines are written whole, under a lock, straight to standard output (no buffering, so a pipe sees them live).
/// Colour (ANSI) is used only when asked for and standard output is a terminal.
final class DemoTracePrinter: Sendable {
    private let origin: ContinuousClock.Instant
    private let color: Bool
    private let recorded = Mutex<[LoaderEvent]>([])
    private let output = Mutex(())

    /// - Parameters:
    ///   - origin: the demo's start; times are printed relative to it.
    ///   - color: whether to use ANSI colours (the caller checks for a terminal).
    init(origin: ContinuousClock.Instant, color: Bool) {
        self.origin = origin
        self.color = color
    }

    /// Every loader event so far, in the order they were reported.
    var events: [LoaderEvent] { recorded.withLock { $0 } }

    /// The events of the requests whose URL satisfies `matches`.
    func events(where matches: (String) -> Bool) -> [LoaderEvent] {
        events.filter { matches($0.url) }
    }

    // MARK: - Lines

    private enum Style: String {
        case plain = ""
        case dim = "2"
        case bold = "1"
        case heading = "1;36"
        case waiting = "33"
        case good = "32"
        case bad = "31"
    }

    /// A loader decision.
    func event(_ event: LoaderEvent) {
        recorded.withLock { $0.append(event) }
        let attempt = event.attempt > 0 ? "try \(event.attempt)" : ""
        let prefix = "\(stamp(event.at - origin))  \(pad("#\(event.request)", 4)) \(pad(attempt, 5))  "
        var text = event.summary
        if case .unreachable(_, let error) = event.kind, let cause = error.cause {
            // The summary says "could not connect"; the cause says how (refused, no route, ...).
            text += ": \(cause)"
        }
        write(prefix, text, style: DemoTracePrinter.style(of: event.kind))
    }

    /// A request the upstream answered.
    func upstream(_ record: UpstreamRecord) {
        let prefix = "\(stamp(record.at))  \(pad("", 4)) \(pad("", 5))  "
        write(prefix, "upstream: \(record.line) -> \(record.status), \(record.note)", style: .dim)
    }

    /// A scenario's heading and what it shows.
    func section(_ title: String, _ explanation: String) {
        write("\n", title, style: .heading)
        write("", "  " + explanation, style: .plain)
    }

    /// A free line (set-up, summary, verdict).
    func note(_ text: String, bad: Bool = false, good: Bool = false) {
        write("", text, style: bad ? .bad : good ? .good : .plain)
    }

    private func write(_ prefix: String, _ text: String, style: Style) {
        let styled = color && style != .plain ? "\u{1B}[\(style.rawValue)m\(text)\u{1B}[0m" : text
        let line = prefix + styled + "\n"
        output.withLock { _ in FileHandle.standardOutput.write(Data(line.utf8)) }
    }

    /// `  +1234ms`: milliseconds since the start, right-aligned.
    private func stamp(_ elapsed: Duration) -> String {
        let ms = max(0, Int((elapsed.seconds * 1000).rounded()))
        return pad("+\(ms)ms", 9, right: true)
    }

    private func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let fill = String(repeating: " ", count: max(0, width - text.count))
        return right ? fill + text : text + fill
    }

    private static func style(of kind: LoaderEvent.Kind) -> Style {
        switch kind {
        case .started: return .bold
        case .authorising, .connecting(_, fallback: false): return .plain
        case .connecting(_, fallback: true): return .waiting
        case .rateLimited, .coolingDown, .retryAfter, .refreshing, .retrying, .coalesced: return .waiting
        case .unreachable, .givingUp, .cache(.failed): return .bad
        case .cache(.hit), .cache(.revalidated): return .good
        case .cache: return .plain
        case .coordination(.unavailable): return .bad
        case .coordination: return .waiting
        case .response(let status): return status >= 400 ? .bad : .plain
        case .finished(let status, let error):
            return error == nil && (status ?? 0) < 400 ? .good : .bad
        }
    }
}
