package import CourierCore

/// A response as the HTTP cache files it in a record: what is needed to answer from it, to judge its freshness
/// and to revalidate it, and what `courier cache` shows (method, URL, the request's varied fields).
///
/// The encoding is the record's payload (the record store adds its own header, checksums and crash safety): a
/// version byte, then little-endian fixed-width numbers and length-prefixed UTF-8 strings, then the body. Decoding
/// checks every length against what is left and never traps on any bytes: anything that does not decode is
/// ``StoredResponse/DecodingError`` and the cache treats the record as missing.
package struct StoredResponse: Sendable, Hashable {
    package static let formatVersion: UInt8 = 1

    /// The request's method and URL (for display and invalidation).
    package var method: HTTPMethod
    package var url: String
    /// The `Vary` field names and the values the request had for them (sorted by name, lower case).
    package var variedFields: [HTTPHeaders.Field]
    package var status: Int
    package var reason: String
    package var headers: HTTPHeaders {
        didSet { cacheControl = CacheControl(headers) }
    }
    /// The `Cache-Control` directives of ``headers``, parsed once: every cache lookup of the response reads them.
    package private(set) var cacheControl: CacheControl
    /// When the request was sent and the response received, nanoseconds since the Unix epoch (wall clock: the
    /// `Date` and `Age` arithmetic of RFC 9111 §4.2.3 is in wall-clock time).
    package var requestTime: Int64
    package var responseTime: Int64
    package var body: [UInt8]

    package init(
        method: HTTPMethod, url: String, variedFields: [HTTPHeaders.Field], status: Int, reason: String, headers: HTTPHeaders,
        requestTime: Int64, responseTime: Int64, body: [UInt8]
    ) {
        self.method = method
        self.url = url
        self.variedFields = variedFields
        self.status = status
        self.reason = reason
        self.headers = headers
        self.cacheControl = CacheControl(headers)
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.body = body
    }

    /// Why bytes are not a stored response.
    package enum DecodingError: Error, Hashable, Sendable {
        /// Another format version (a newer Courier wrote it, or the bytes are not a stored response).
        case unsupportedVersion(UInt8)
        /// The bytes end before a field they announce.
        case truncated
        /// A string is not UTF-8, or a status or method is out of range.
        case invalidField
        /// More fields than the format allows (a defence against an absurd count).
        case tooManyFields
    }

    /// At most this many header fields (and varied fields) are encoded or accepted.
    package static let maximumFields = 10_000

    // MARK: - Encoding

    package func encoded() -> [UInt8] {
        var out: [UInt8] = [Self.formatVersion]
        out.reserveCapacity(256 + body.count)
        Self.append(method.rawValue, to: &out)
        Self.append(url, to: &out)
        Self.append(UInt32(variedFields.count), to: &out)
        for field in variedFields {
            Self.append(field.name, to: &out)
            Self.append(field.value, to: &out)
        }
        Self.append(UInt16(clamping: status), to: &out)
        Self.append(reason, to: &out)
        let fields = headers.fields
        Self.append(UInt32(fields.count), to: &out)
        for field in fields {
            Self.append(field.name, to: &out)
            Self.append(field.value, to: &out)
        }
        Self.append(UInt64(bitPattern: requestTime), to: &out)
        Self.append(UInt64(bitPattern: responseTime), to: &out)
        Self.append(UInt64(body.count), to: &out)
        out += body
        return out
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to out: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { out += $0 }
    }

    private static func append(_ string: String, to out: inout [UInt8]) {
        let bytes = Array(string.utf8)
        append(UInt32(bytes.count), to: &out)
        out += bytes
    }

    // MARK: - Decoding

    package init(decoding bytes: [UInt8]) throws(DecodingError) {
        var reader = Reader(bytes: bytes)
        let version = try reader.byte()
        guard version == Self.formatVersion else { throw .unsupportedVersion(version) }
        let method = HTTPMethod(rawValue: try reader.string())
        guard method.isValidToken else { throw .invalidField }
        self.method = method
        url = try reader.string()
        variedFields = try reader.fields()
        let status: UInt16 = try reader.integer()
        guard (100...999).contains(status) else { throw .invalidField }
        self.status = Int(status)
        reason = try reader.string()
        headers = HTTPHeaders(fields: try reader.fields())
        cacheControl = CacheControl(headers)
        requestTime = Int64(bitPattern: try reader.integer() as UInt64)
        responseTime = Int64(bitPattern: try reader.integer() as UInt64)
        let length: UInt64 = try reader.integer()
        guard length == UInt64(reader.remaining) else { throw .truncated }
        body = reader.rest()
    }

    /// Reads the encoding front to back, checking each length against what is left.
    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        var remaining: Int { bytes.count - offset }

        mutating func byte() throws(DecodingError) -> UInt8 {
            guard remaining >= 1 else { throw .truncated }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func integer<T: FixedWidthInteger>() throws(DecodingError) -> T {
            let size = MemoryLayout<T>.size
            guard remaining >= size else { throw .truncated }
            var value: T = 0
            for index in 0..<size { value |= T(bytes[offset + index]) << (8 * index) }
            offset += size
            return value
        }

        mutating func string() throws(DecodingError) -> String {
            let count: UInt32 = try integer()
            guard UInt64(count) <= UInt64(remaining) else { throw .truncated }
            let slice = bytes[offset..<(offset + Int(count))]
            offset += Int(count)
            guard let text = String(validating: slice, as: UTF8.self) else { throw .invalidField }
            return text
        }

        mutating func fields() throws(DecodingError) -> [HTTPHeaders.Field] {
            let count: UInt32 = try integer()
            guard count <= StoredResponse.maximumFields else { throw .tooManyFields }
            var fields: [HTTPHeaders.Field] = []
            for _ in 0..<count { fields.append(HTTPHeaders.Field(name: try string(), value: try string())) }
            return fields
        }

        mutating func rest() -> [UInt8] {
            defer { offset = bytes.count }
            return Array(bytes[offset...])
        }
    }
}
