internal import CourierCore
internal import CourierHTTP1
internal import CourierTransport

/// `courier fetch -v` without a policy, and under the loader's trace with one: what curl's `-v` shows, on
/// standard error as it happens. `*` lines for the connection (host, the address connected to, the TLS session
/// and the server's certificate), `>` lines for each request head as written, `<` lines for each response head
/// as read; every redirect hop and retry shows its own.
struct VerboseObserver: ExchangeObserver {
    /// Put before every line of the URL being fetched when a run has several (`#2 `), so the lines of URLs
    /// fetched in parallel can be told apart; empty for one URL.
    @TaskLocal static var prefix = ""

    func connection(_ connection: ExchangeConnection) {
        if connection.reused {
            write("*", ["Re-using the connection to \(connection.host) port \(connection.port)"])
            return
        }
        let address = connection.address.map(Self.hostPart) ?? "address unknown"
        var lines = ["Connected to \(connection.host) (\(address)) port \(connection.port)"]
        if let session = connection.tls { lines += TLSSessionDescription.lines(session) }
        write("*", lines)
    }

    func sent(head: [UInt8]) {
        // The head's lines, CRLF-separated and ending with an empty one: the blank line, printed as '>' alone.
        var lines = String(decoding: head, as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        while lines.count > 1 && lines.last == "" && lines[lines.count - 2] == "" { lines.removeLast() }
        write(">", lines)
    }

    func received(head: HTTPResponseHead) {
        write("<", ["\(head.version) \(head.status) \(head.reason)"] + head.headers.map { "\($0.name): \($0.value)" } + [""])
    }

    private func write(_ mark: String, _ lines: [String]) {
        let prefix = Self.prefix
        StandardError.write(lines.map { prefix + ($0.isEmpty ? mark : mark + " " + $0) }.joined(separator: "\n"))
    }

    /// `127.0.0.1` of `127.0.0.1:8443`, `::1` of `[::1]:80`.
    static func hostPart(_ address: String) -> String {
        if address.hasPrefix("["), let end = address.firstIndex(of: "]") {
            return String(address[address.index(after: address.startIndex)..<end])
        }
        return address.split(separator: ":").first.map(String.init) ?? address
    }
}
