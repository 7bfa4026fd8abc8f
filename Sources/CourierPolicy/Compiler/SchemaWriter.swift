internal import CourierCore

/// Writes ``PolicySchema``'s JSON by hand (no Foundation in this layer), pretty-printed with sorted keys so
/// the output is stable.
struct SchemaWriter {
    let registry: AuthoriserRegistry

    /// A JSON value.
    indirect enum JSON {
        case string(String)
        case number(Double)
        case bool(Bool)
        case array([JSON])
        case object([(String, JSON)])

        func render(indent: Int = 0) -> String {
            let pad = String(repeating: "  ", count: indent)
            let inner = String(repeating: "  ", count: indent + 1)
            switch self {
            case .string(let s): return SchemaWriter.quote(s)
            case .number(let n): return n == n.rounded() && abs(n) < 1e15 ? String(Int(n)) : String(n)
            case .bool(let b): return b ? "true" : "false"
            case .array(let items):
                if items.isEmpty { return "[]" }
                if items.allSatisfy({ if case .string = $0 { return true } else { return false } }) {
                    return "[" + items.map { $0.render() }.joined(separator: ", ") + "]"
                }
                return "[\n" + items.map { inner + $0.render(indent: indent + 1) }.joined(separator: ",\n") + "\n" + pad + "]"
            case .object(let pairs):
                if pairs.isEmpty { return "{}" }
                let sorted = pairs.sorted { $0.0 < $1.0 }
                return "{\n" + sorted.map { inner + SchemaWriter.quote($0.0) + ": " + $0.1.render(indent: indent + 1) }.joined(separator: ",\n") + "\n" + pad + "}"
            }
        }
    }

    static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    static let durationPattern = "^([0-9]+(\\.[0-9]+)?d)?([0-9]+(\\.[0-9]+)?h)?([0-9]+(\\.[0-9]+)?m)?([0-9]+(\\.[0-9]+)?s)?([0-9]+(\\.[0-9]+)?ms)?$"
    static let sizePattern = "^[0-9]+(\\.[0-9]+)?(B|KiB|MiB|GiB|TiB|KB|kB|MB|GB|TB)?$"

    func document() -> String {
        var root = object(PolicyLanguage.root, description: "A Courier policy file (language version 1).")
        root.append(("$schema", .string("http://json-schema.org/draft-07/schema#")))
        root.append(("$id", .string("https://courier.example/schema/policy-v1.json")))
        root.append(("title", .string("Courier policy")))
        return JSON.object(root).render() + "\n"
    }

    private func object(_ table: PolicyLanguage.Table, description: String? = nil) -> [(String, JSON)] {
        var properties: [(String, JSON)] = []
        for key in table.keys {
            var schema = shape(key.shape)
            var text = key.summary
            if let d = key.defaultText { text += " Default: \(d)." }
            schema.append(("description", .string(text)))
            if key.name == "version" { schema.append(("const", .number(1))) }
            properties.append((key.name, .object(schema)))
        }
        var out: [(String, JSON)] = [
            ("type", .string("object")),
            ("properties", .object(properties)),
            ("additionalProperties", .bool(false)),
        ]
        if !table.required.isEmpty { out.append(("required", .array(table.required.map { .string($0) }))) }
        if let description { out.append(("description", .string(description))) }
        if table.name == PolicyLanguage.authoriser.name { out.append(("allOf", .array(pluginConditions()))) }
        return out
    }

    /// One if/then per plugin type: when `plugin` is that type, `settings` takes exactly its settings.
    private func pluginConditions() -> [JSON] {
        var out: [JSON] = [
            .object([("properties", .object([("plugin", .object([("enum", .array(registry.typeNames.map { .string($0) }))]))]))])
        ]
        for name in registry.typeNames {
            guard let descriptor = registry[name] else { continue }
            var properties: [(String, JSON)] = []
            for setting in descriptor.settings {
                var schema = settingShape(setting.kind)
                var text = setting.summary
                if let d = setting.defaultValue { text += " Default: \(d)." }
                schema.append(("description", .string(text)))
                properties.append((setting.name, .object(schema)))
            }
            var settings: [(String, JSON)] = [
                ("type", .string("object")), ("properties", .object(properties)), ("additionalProperties", .bool(false)),
            ]
            let required = descriptor.settings.filter(\.required).map { JSON.string($0.name) }
            if !required.isEmpty { settings.append(("required", .array(required))) }
            out.append(.object([
                ("if", .object([("properties", .object([("plugin", .object([("const", .string(name))]))])), ("required", .array([.string("plugin")]))])),
                ("then", .object([("properties", .object([("settings", .object(settings))]))])),
            ]))
        }
        return out
    }

    private func settingShape(_ kind: AuthoriserTypeDescriptor.Kind) -> [(String, JSON)] {
        switch kind {
        case .string, .secret: return [("type", .string("string"))]
        case .url: return [("type", .string("string")), ("pattern", .string("^(https?://|\\$\\{)"))]
        case .duration: return shape(.duration)
        case .bool: return [("type", .string("boolean"))]
        case .stringList: return [("type", .string("array")), ("items", .object([("type", .string("string"))]))]
        case .headerName: return shape(.headerName)
        case .choice(let options): return [("enum", .array(options.map { .string($0) }))]
        }
    }

    private func shape(_ shape: PolicyLanguage.Shape) -> [(String, JSON)] {
        switch shape {
        case .integer(let minimum, let maximum):
            var out: [(String, JSON)] = [("type", .string("integer")), ("minimum", .number(Double(minimum)))]
            if let maximum { out.append(("maximum", .number(Double(maximum)))) }
            return out
        case .number(let minimum, let exclusive, let maximum):
            var out: [(String, JSON)] = [("type", .string("number")), (exclusive ? "exclusiveMinimum" : "minimum", .number(minimum))]
            if let maximum { out.append(("maximum", .number(maximum))) }
            return out
        case .boolean: return [("type", .string("boolean"))]
        case .string: return [("type", .string("string"))]
        case .duration: return [("type", .string("string")), ("pattern", .string(Self.durationPattern)), ("examples", .array([.string("250ms"), .string("5s"), .string("2m")]))]
        case .durationOrNone:
            return [("anyOf", .array([.object(self.shape(.duration)), .object([("const", .string("none"))])]))]
        case .size: return [("type", .string("string")), ("pattern", .string(Self.sizePattern)), ("examples", .array([.string("512KiB"), .string("10MiB")]))]
        case .choice(let options): return [("enum", .array(options.map { .string($0) }))]
        case .hostPattern: return [("type", .string("string")), ("pattern", .string("^(\\*\\.)?[A-Za-z0-9.:\\[\\]-]+$"))]
        case .hostAddress: return [("type", .string("string"))]
        case .headerName: return [("type", .string("string")), ("pattern", .string("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$"))]
        case .pin: return [("type", .string("string")), ("pattern", .string("^sha256/[A-Za-z0-9+/]{43}=$"))]
        case .redisURL:
            return [("type", .string("string")), ("pattern", .string("^rediss?://[^/?#@:\\[\\]]+(:[0-9]{1,5})?(/[0-9]*)?$|^rediss?://\\[[0-9A-Fa-f:.]+\\](:[0-9]{1,5})?(/[0-9]*)?$")),
                    ("examples", .array([.string("redis://127.0.0.1:6379/0"), .string("rediss://redis.internal:6380")]))]
        case .keyPrefix: return [("type", .string("string")), ("pattern", .string("^[!-~]{1,64}$"))]
        case .retryCondition:
            return [("anyOf", .array([
                .object([("enum", .array(RetryPolicy.Condition.tokens.map { .string($0) }))]),
                .object([("type", .string("integer")), ("minimum", .number(100)), ("maximum", .number(599))]),
            ]))]
        case .method: return [("type", .string("string")), ("pattern", .string("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")), ("examples", .array(HTTPMethod.standard.map { .string($0.rawValue) }))]
        case .list(let item): return [("type", .string("array")), ("items", .object(self.shape(item)))]
        case .oneOrList(let item):
            return [("anyOf", .array([.object(self.shape(item)), .object(self.shape(.list(item)))]))]
        case .mapping(let table): return object(table)
        case .mappingOrOff(let table):
            return [("anyOf", .array([.object(object(table)), .object([("const", .string("off"))])]))]
        case .dictionary(_, let value):
            return [("type", .string("object")), ("additionalProperties", .object(self.shape(value)))]
        case .settings:
            return [("type", .string("object"))]
        }
    }
}
