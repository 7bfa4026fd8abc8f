import Foundation

/// `http-bench --client courier|ahc|urlsession --url U --requests N --concurrency C --max-seconds S
/// [--cacert PEM] [--new-connection]`
struct BenchOptions {
    enum Client: String { case courier, ahc, urlsession }

    var client: Client = .courier
    var url = ""
    var requests = 10_000
    var concurrency = 1
    var maxSeconds = 30.0
    var caCert: String?
    var newConnection = false

    static let usage = """
        usage: http-bench --client courier|ahc|urlsession --url URL [--requests N] [--concurrency C]
                          [--max-seconds S] [--cacert PEM] [--new-connection]
        """

    init(arguments: [String]) throws {
        var it = arguments.makeIterator()
        func value(_ flag: String) throws -> String {
            guard let v = it.next() else { throw UsageError(message: "\(flag) needs a value") }
            return v
        }
        while let arg = it.next() {
            switch arg {
            case "--client":
                let v = try value(arg)
                guard let c = Client(rawValue: v) else { throw UsageError(message: "unknown client '\(v)'") }
                client = c
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

    private static func positiveInt(_ s: String, _ flag: String) throws -> Int {
        guard let n = Int(s), n > 0 else { throw UsageError(message: "\(flag) takes a positive whole number") }
        return n
    }
}

struct UsageError: Error { var message: String }
