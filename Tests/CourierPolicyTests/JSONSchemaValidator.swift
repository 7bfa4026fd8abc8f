@testable import CourierPolicy
import Foundation
import Testing

/// A small JSON Schema (draft-07) validator for the keywords policies/policy.schema.json uses, so the tests can
/// check policies against the schema editors read, independently of the compiler. A keyword it does not know is
/// an error, never skipped: the schema cannot grow a rule that this validator silently ignores.
struct JSONSchemaValidator {
    /// A YAML document as the schema sees it (YAML 1.2 core schema: plain `true`, numbers and `null` are typed).
    indirect enum Instance {
        case null, bool(Bool), integer(Int), number(Double), string(String), array([Instance]), object([(String, Instance)])
    }

    let schema: [String: Any]

    static let annotations: Set<String> = ["$schema", "$id", "title", "description", "examples", "default"]

    /// Every violation, as `path: what`; empty when `instance` is valid.
    func validate(_ instance: Instance) -> [String] {
        var errors: [String] = []
        check(instance, against: schema, path: "$", errors: &errors)
        return errors
    }

    private func check(_ instance: Instance, against schema: [String: Any], path: String, errors: inout [String]) {
        var properties: [String: Any] = [:]
        if let p = schema["properties"] as? [String: Any] { properties = p }
        for (keyword, value) in schema {
            switch keyword {
            case "type":
                if !Self.has(instance, type: value as? String ?? "") { errors.append("\(path): not of type \(value)") }
            case "properties":
                guard case .object(let pairs) = instance else { continue }
                for (key, child) in pairs {
                    if let sub = properties[key] as? [String: Any] { check(child, against: sub, path: "\(path).\(key)", errors: &errors) }
                }
            case "additionalProperties":
                guard case .object(let pairs) = instance else { continue }
                for (key, child) in pairs where properties[key] == nil {
                    if let sub = value as? [String: Any] {
                        check(child, against: sub, path: "\(path).\(key)", errors: &errors)
                    } else if (value as? Bool) == false {
                        errors.append("\(path): key '\(key)' is not allowed")
                    }
                }
            case "required":
                guard case .object(let pairs) = instance else { continue }
                for key in value as? [String] ?? [] where !pairs.contains(where: { $0.0 == key }) {
                    errors.append("\(path): '\(key)' is required")
                }
            case "enum":
                if !(value as? [Any] ?? []).contains(where: { Self.equal(instance, $0) }) { errors.append("\(path): not one of \(value)") }
            case "const":
                if !Self.equal(instance, value) { errors.append("\(path): not \(value)") }
            case "pattern":
                guard case .string(let text) = instance else { continue }
                let regex = try! NSRegularExpression(pattern: value as! String)
                if regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) == nil {
                    errors.append("\(path): '\(text)' does not match \(value)")
                }
            case "anyOf":
                let options = value as? [[String: Any]] ?? []
                if !options.contains(where: { passes(instance, $0) }) { errors.append("\(path): matches none of anyOf") }
            case "allOf":
                for sub in value as? [[String: Any]] ?? [] { check(instance, against: sub, path: path, errors: &errors) }
            case "if":
                guard let condition = value as? [String: Any], passes(instance, condition), let then = schema["then"] as? [String: Any] else { continue }
                check(instance, against: then, path: path, errors: &errors)
            case "then":
                continue  // with "if"
            case "items":
                guard case .array(let items) = instance, let sub = value as? [String: Any] else { continue }
                for (i, item) in items.enumerated() { check(item, against: sub, path: "\(path)[\(i)]", errors: &errors) }
            case "minimum", "maximum", "exclusiveMinimum":
                guard let n = Self.number(instance), let bound = (value as? NSNumber)?.doubleValue else { continue }
                let ok = keyword == "minimum" ? n >= bound : keyword == "maximum" ? n <= bound : n > bound
                if !ok { errors.append("\(path): \(n) breaks \(keyword) \(bound)") }
            default:
                if !Self.annotations.contains(keyword) { errors.append("\(path): the validator does not know the keyword '\(keyword)'") }
            }
        }
    }

    private func passes(_ instance: Instance, _ schema: [String: Any]) -> Bool {
        var errors: [String] = []
        check(instance, against: schema, path: "", errors: &errors)
        return errors.isEmpty
    }

    private static func has(_ instance: Instance, type: String) -> Bool {
        switch (type, instance) {
        case ("object", .object), ("array", .array), ("string", .string), ("boolean", .bool), ("null", .null): return true
        case ("integer", .integer), ("number", .integer), ("number", .number): return true
        default: return false
        }
    }

    private static func number(_ instance: Instance) -> Double? {
        switch instance {
        case .integer(let i): return Double(i)
        case .number(let d): return d
        default: return nil
        }
    }

    private static func equal(_ instance: Instance, _ value: Any) -> Bool {
        switch instance {
        case .string(let s): return (value as? String) == s
        case .integer, .number: return (value as? NSNumber)?.doubleValue == number(instance) && !(value is String)
        case .bool(let b): return (value as? Bool) == b && !(value is String)
        default: return false
        }
    }

    // MARK: - Reading

    /// The committed schema, policies/policy.schema.json.
    static func committed() throws -> JSONSchemaValidator {
        let text = try #require(readText(Fixtures.policies + "/policy.schema.json"))
        return JSONSchemaValidator(schema: try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]))
    }

    /// A YAML file's document, through the compiler's own composer (libyaml).
    static func instance(yaml: String) throws -> Instance {
        var duplicates: [(key: String, line: Int, column: Int)] = []
        let tree = try YAMLComposer(limits: .default).compose(Array(yaml.utf8), duplicates: &duplicates).get()
        #expect(duplicates.isEmpty)
        func convert(_ node: Int) -> Instance {
            switch tree[node].kind {
            case .scalar(let text, let plain):
                guard plain else { return .string(text) }
                if ["", "~", "null", "Null", "NULL"].contains(text) { return .null }
                if text == "true" || text == "false" { return .bool(text == "true") }
                if let i = Int(text) { return .integer(i) }
                if let d = Double(text), text.first.map({ $0.isNumber || $0 == "-" || $0 == "." }) == true { return .number(d) }
                return .string(text)
            case .sequence(let items): return .array(items.map(convert))
            case .mapping(let pairs):
                return .object(pairs.map { pair in
                    guard case .scalar(let key, _) = tree[pair.key].kind else { return ("<non-scalar key>", convert(pair.value)) }
                    return (key, convert(pair.value))
                })
            }
        }
        return try convert(#require(tree.root))
    }
}
