public import CourierCore

/// `plugin: basic`: HTTP Basic authentication (RFC 7617): `Authorization: Basic base64(user-id ":" password)`,
/// with both encoded as UTF-8 (the `charset="UTF-8"` of §2.1).
public enum BasicPlugin: AuthoriserPlugin {
    public static let descriptor = BuiltInAuthoriserTypes.basic

    public static func make(_ instance: AuthoriserInstance, context: AuthoriserContext) throws -> any Authoriser {
        let settings = PluginSettings(instance, context)
        let username = try settings.requiredString("username")
        let password = try settings.requiredString("password")
        // RFC 7617 §2: a user-id containing a colon cannot be told apart from the password; control characters
        // are not allowed in either.
        guard !username.contains(":") else { throw settings.invalid("username", "must not contain ':'") }
        guard !username.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw settings.invalid("username", "must not contain control characters")
        }
        guard !password.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw settings.invalid("password", "must not contain control characters")
        }
        let credentials = Base64.encode(Array("\(username):\(password)".utf8))
        return HeaderAuthoriser(name: "Authorization", value: "Basic " + credentials)
    }
}
