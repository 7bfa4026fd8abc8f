internal import Foundation
internal import CourierCore

/// A one-line download progress bar on standard error, drawn only when standard error is a terminal and at
/// most ten times a second.
final class ProgressBar {
    private let enabled: Bool
    private let expected: Int?
    private var received = 0
    private var lastDraw = ContinuousClock.now
    private let start = ContinuousClock.now
    private var drawn = false

    init(expectedBytes: Int?) {
        self.enabled = isatty(2) == 1
        self.expected = expectedBytes
    }

    func advance(by bytes: Int) {
        received += bytes
        guard enabled, ContinuousClock.now - lastDraw >= .milliseconds(100) else { return }
        lastDraw = .now
        draw()
    }

    func finish() {
        guard enabled, drawn else { return }
        draw()
        FileHandle.standardError.write(Data("\n".utf8))
    }

    private func draw() {
        drawn = true
        let elapsed = max(0.001, (ContinuousClock.now - start).seconds)
        let rate = Double(received) / elapsed
        var line = "\r"
        if let expected, expected > 0 {
            let fraction = min(1, Double(received) / Double(expected))
            let width = 30
            let filled = Int(fraction * Double(width))
            line += "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) + "] "
            line += String(format: "%3.0f%% ", fraction * 100)
        }
        line += "\(Self.size(received)) at \(Self.size(Int(rate)))/s"
        FileHandle.standardError.write(Data(line.utf8))
    }

    static func size(_ bytes: Int) -> String {
        let units = ["B", "KiB", "MiB", "GiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f %@", value, units[unit])
    }
}
