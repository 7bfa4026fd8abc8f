#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Something that turns a whole response body into a `Decodable` value: what ``Response/decode(_:using:)`` calls.
/// `JSONDecoder` and `PropertyListDecoder` are decoders (configure them as usual: key strategies, dates); a decoder
/// of another format conforms with one method.
public protocol ResponseDecoder {
    /// The value of type `type` that `body` holds; throws when it holds none.
    func decode<T: Decodable>(_ type: T.Type, from body: [UInt8]) throws -> T
}

extension JSONDecoder: ResponseDecoder {
    public func decode<T: Decodable>(_ type: T.Type, from body: [UInt8]) throws -> T {
        try decode(type, from: Data(body))
    }
}

extension PropertyListDecoder: ResponseDecoder {
    public func decode<T: Decodable>(_ type: T.Type, from body: [UInt8]) throws -> T {
        try decode(type, from: Data(body))
    }
}
