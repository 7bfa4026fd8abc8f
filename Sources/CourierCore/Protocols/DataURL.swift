/// A `data:` URL's parts (RFC 2397): `data:[<mediatype>][;base64],<data>`. Pure: text in, bytes out.
package struct DataURL: Hashable, Sendable {
    /// The media type with its parameters, as the URL gave it (percent-decoded), or RFC 2397's default
    /// `text/plain;charset=US-ASCII` when it gave none (`text/plain` when it gave parameters only).
    package var mediaType: String
    /// The payload: percent-decoded, then base64-decoded when the URL said `;base64`.
    package var bytes: [UInt8]

    package static let defaultMediaType = "text/plain;charset=US-ASCII"

    /// Parses the text after `data:` (``HTTPURL/path`` of a `data:` URL). Throws ``ProtocolPluginError`` saying what
    /// is wrong: no comma, a bad `%` escape, a media type that is not `type/subtype`, invalid base64.
    package init(_ text: some StringProtocol) throws(ProtocolPluginError) {
        guard let comma = text.utf8.firstIndex(of: UInt8(ascii: ",")) else {
            throw ProtocolPluginError("the data: URL has no ',' before its data")
        }
        guard let header = text[..<comma].percentDecoded else {
            throw ProtocolPluginError("the data: URL's media type has a '%' that is not followed by two hex digits")
        }
        guard !header.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
            throw ProtocolPluginError("the data: URL's media type has a control character")
        }
        var parameters = header.split(separator: ";", omittingEmptySubsequences: false).map { String($0.trimmingHTTPWhitespace) }
        let base64 = parameters.count > 1 && parameters.last?.lowercased() == "base64"
        if base64 { parameters.removeLast() }
        let type = parameters.removeFirst()
        if type.isEmpty {
            let rest = parameters.filter { !$0.isEmpty }
            mediaType = rest.isEmpty ? Self.defaultMediaType : (["text/plain"] + rest).joined(separator: ";")
        } else {
            let halves = type.split(separator: "/", omittingEmptySubsequences: false)
            guard halves.count == 2, halves.allSatisfy({ HTTPToken.isToken($0) }) else {
                throw ProtocolPluginError("the data: URL's media type '\(type)' is not type/subtype")
            }
            mediaType = ([type] + parameters.filter { !$0.isEmpty }).joined(separator: ";")
        }
        guard let payload = text[text.utf8.index(after: comma)...].percentDecodedBytes else {
            throw ProtocolPluginError("the data: URL's data has a '%' that is not followed by two hex digits")
        }
        guard base64 else {
            bytes = payload
            return
        }
        var encoded = payload.filter { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0C || $0 == 0x0D) }
        // Browsers accept base64 without its padding; so does Courier.
        if encoded.count % 4 != 0, encoded.count % 4 != 1 {
            encoded += Array(repeating: UInt8(ascii: "="), count: 4 - encoded.count % 4)
        }
        guard let decoded = Base64.decode(String(decoding: encoded, as: UTF8.self)) else {
            throw ProtocolPluginError("the data: URL's base64 data is invalid")
        }
        bytes = decoded
    }
}
