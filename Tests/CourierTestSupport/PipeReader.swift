import CourierCore
import Foundation

/// Reads a child process's output pipe, retrying `EINTR` (see ``ChildProcess``).
public enum PipeReader {
    /// Everything written to the pipe `fd` until its writers close it, as UTF-8 text.
    public static func readToEnd(_ fd: Int32) throws -> String {
        String(decoding: try SystemCall.readToEnd(fileDescriptor: fd), as: UTF8.self)
    }

    /// The first line of the pipe `fd` that starts with `prefix`, read until `deadline`. Returns nil when the
    /// writer closes the pipe or the deadline passes first; `transcript` gets everything read.
    public static func firstLine(
        startingWith prefix: String, in fd: Int32, before deadline: ContinuousClock.Instant, transcript: inout String
    ) throws -> Substring? {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let text = String(decoding: bytes, as: UTF8.self)
            transcript = text
            // Only complete lines: the last element is what follows the last newline.
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            if let line = lines.first(where: { $0.hasPrefix(prefix) }) { return line }
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return nil }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            guard try SystemCall.blocking("poll", { poll(&poller, 1, milliseconds) }) > 0 else { continue }
            let n = try SystemCall.blocking("read") { chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) } }
            if n == 0 { return nil }
            bytes += chunk[0..<n]
        }
    }
}
