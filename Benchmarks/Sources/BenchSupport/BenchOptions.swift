/// `http-bench|courier-load --client C --url U --requests N --concurrency C --max-seconds S [--cacert PEM]
/// [--new-connection]`
public struct BenchOptions: Sendable {
    public var client = "courier"
    public var url = ""
    public var requests = 10_000
    public var concurrency = 1
    public var maxSeconds = 30.0
    /// A PEM file of the CA that signed the server's certificate, trusted instead of the system's store.
    public var caCert: String?
    /// A new connection per request: every client sends `Connection: close`, so it keeps its own pool, TLS
    /// context and session cache, and the server ends each connection after its response.
    public var newConnection = false

    public static func usage(_ tool: String, clients: [String]) -> String {
        """
        usage: \(tool) --client \(clients.joined(separator: "|")) --url URL [--requests N] [--concurrency C]
                          [--max-seconds S] [--cacert PEM] [--new-connection]
        """
    }

    /// Without `--client`, the tool's first client (`courier`, or `ahc` for ahc-load).
    public init(arguments: [String], clients: [String]) throws(UsageError) {
        if let first = clients.first { client = first }
        var it = arguments.makeIterator()
        func value(_ flag: String) throws(UsageError) -> String {
            guard let v = it.next() else { throw UsageError(message: "\(flag) needs a value") }
            return v
        }
        while let arg = it.next() {
            switch arg {
            case "--client":
                let v = try value(arg)
                guard clients.contains(v) else { throw UsageError(message: "unknown client '\(v)'") }
                client = v
            case "--url": url = try value(arg)
            case "--requests": requests = try Self.positiveInt(value(arg), arg)
            case "--concurrency": concurrency = try Self.positiveInt(value(arg), arg)
            case "--max-seconds":
                guard let s = Double(try value(arg)), s > 0 else { throw UsageError(message: "--max-seconds > 0") }
                maxSeconds = s
            case "--cacert": caCert = try value(arg)
            case "--new-connection": newConnection = true
            default: throw UsageError(message: "unknown argument '\(arg)'")
            }
        }
        guard !url.isEmpty else { throw UsageError(message: "--url is required") }
    }

    private static func positiveInt(_ s: String, _ flag: String) throws(UsageError) -> Int {
        guard let n = Int(s), n > 0 else { throw UsageError(message: "\(flag) takes a positive whole number") }
        return n
    }
}

public struct UsageError: Error {
    public var message: String
    public init(message: String) { self.message = message }
}
