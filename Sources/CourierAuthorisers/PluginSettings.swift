internal import CourierCore

/// Reads one instance's settings with their secrets resolved, turning an absent required setting or a value of
/// the wrong shape into an ``AuthoriserError`` that names the setting (never its value).
struct PluginSettings {
    let instance: AuthoriserInstance
    let secrets: SecretResolver

    init(_ instance: AuthoriserInstance, _ context: AuthoriserContext) {
        self.instance = instance
        self.secrets = context.secrets
    }

    /// A string setting with its references resolved; nil when absent.
    func string(_ name: String) throws(AuthoriserError) -> String? {
        guard let value = instance.settings[name] else { return nil }
        guard case .string(let text) = value else { throw invalid(name, "must be a string") }
        do {
            return try secrets.resolve(text)
        } catch {
            var error = error
            error.message = "setting '\(name)': " + error.message
            throw error.naming(instance.name)
        }
    }

    func requiredString(_ name: String) throws(AuthoriserError) -> String {
        guard let value = try string(name) else { throw invalid(name, "is required") }
        return value
    }

    /// A string that goes into a header field value: it must hold no CR, LF or NUL.
    func headerValue(_ name: String) throws(AuthoriserError) -> String? {
        guard let value = try string(name) else { return nil }
        guard HTTPHeaders.isValidValue(value) else { throw invalid(name, "holds CR, LF or NUL and cannot go in a header") }
        return value
    }

    func requiredHeaderValue(_ name: String) throws(AuthoriserError) -> String {
        guard let value = try headerValue(name) else { throw invalid(name, "is required") }
        return value
    }

    func headerName(_ name: String, default defaultValue: String) throws(AuthoriserError) -> String {
        let value = try string(name) ?? defaultValue
        guard HTTPHeaders.isValidName(value) else { throw invalid(name, "must be a header name") }
        return value
    }

    func url(_ name: String) throws(AuthoriserError) -> HTTPURL {
        guard let url = HTTPURL(try requiredString(name)) else { throw invalid(name, "must be an absolute http(s) URL") }
        return url
    }

    /// A duration in seconds.
    func seconds(_ name: String, default defaultValue: Double) throws(AuthoriserError) -> Double {
        guard let value = instance.settings[name] else { return defaultValue }
        guard case .duration(let d) = value else { throw invalid(name, "must be a duration") }
        let seconds = Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
        guard seconds >= 0 else { throw invalid(name, "must not be negative") }
        return seconds
    }

    func stringList(_ name: String) throws(AuthoriserError) -> [String]? {
        guard let value = instance.settings[name] else { return nil }
        guard case .list(let items) = value else { throw invalid(name, "must be a list of strings") }
        var out: [String] = []
        for item in items {
            guard case .string(let text) = item else { throw invalid(name, "must be a list of strings") }
            out.append(try secrets.resolve(text))
        }
        return out
    }

    func invalid(_ name: String, _ problem: String) -> AuthoriserError {
        AuthoriserError(.invalidSetting, "setting '\(name)' \(problem)", authoriser: instance.name)
    }
}
