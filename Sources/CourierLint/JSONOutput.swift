internal import FoundationEssentials

/// The one JSON encoding every `courier` output uses: sorted keys, pretty-printed, `/` unescaped, a final
/// newline.
package enum JSONOutput {
    /// Encodes `value`. Encoding plain `Codable` structs of strings and numbers cannot fail; if it ever did,
    /// that is a programming error.
    package static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        do {
            let data = try encoder.encode(value)
            return String(decoding: data, as: UTF8.self) + "\n"
        } catch {
            preconditionFailure("JSON encoding of \(type(of: value)) failed: \(error)")
        }
    }
}
