import CourierCore
import CourierHTTP1

/// What a parse produced, with adjacent body slices merged so that any split of the input compares equal.
enum Parsed: Hashable, CustomStringConvertible {
    case head(HTTPResponseHead)
    case body([UInt8])
    case trailers(HTTPHeaders)
    case end(keepAlive: Bool)
    case error(ResponseParseError)

    var description: String {
        switch self {
        case .head(let h): return "head(\(h.status), \(h.headers.count) fields)"
        case .body(let b): return "body(\(String(decoding: b, as: UTF8.self).debugDescription))"
        case .trailers(let t): return "trailers(\(t))"
        case .end(let k): return "end(keepAlive: \(k))"
        case .error(let e): return "error(\(e))"
        }
    }
}

extension Array where Element == UInt8 {
    init(_ string: String) { self = Array(string.utf8) }
}

/// Feeds `pieces` one after the other (then EOF when asked), draining events after each, and records
/// everything including the first error.
func parsePieces(
    _ pieces: [ArraySlice<UInt8>],
    method: HTTPMethod = .get,
    limits: ResponseParser.Limits = .init(),
    eof: Bool = false
) -> [Parsed] {
    var parser = ResponseParser(requestMethod: method, limits: limits)
    var out: [Parsed] = []
    func record(_ event: ResponseEvent) {
        switch event {
        case .head(let h): out.append(.head(h))
        case .body(let b):
            if case .body(let previous) = out.last {
                out[out.count - 1] = .body(previous + b)
            } else {
                out.append(.body(Array(b)))
            }
        case .trailers(let t): out.append(.trailers(t))
        case .end(let k): out.append(.end(keepAlive: k))
        }
    }
    do {
        for piece in pieces {
            parser.feed(piece)
            while let event = try parser.next() { record(event) }
        }
        if eof {
            parser.eof()
            while let event = try parser.next() { record(event) }
        }
    } catch {
        out.append(.error(error))
    }
    return out
}

/// The whole input in one piece.
func parseWhole(_ bytes: [UInt8], method: HTTPMethod = .get, limits: ResponseParser.Limits = .init(), eof: Bool = false)
    -> [Parsed]
{
    parsePieces([bytes[...]], method: method, limits: limits, eof: eof)
}

func parseWhole(_ text: String, method: HTTPMethod = .get, limits: ResponseParser.Limits = .init(), eof: Bool = false)
    -> [Parsed]
{
    parseWhole([UInt8](text), method: method, limits: limits, eof: eof)
}

/// The reason of the error a parse ended with, if any.
func errorReason(_ events: [Parsed]) -> ResponseParseError.Reason? {
    if case .error(let e) = events.last { return e.reason }
    return nil
}

func errorOffset(_ events: [Parsed]) -> Int? {
    if case .error(let e) = events.last { return e.offset }
    return nil
}

func body(_ events: [Parsed]) -> String? {
    for case .body(let b) in events { return String(decoding: b, as: UTF8.self) }
    return nil
}

func head(_ events: [Parsed]) -> HTTPResponseHead? {
    for case .head(let h) in events { return h }
    return nil
}

