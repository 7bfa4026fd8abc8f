import CourierAuthorisers
import CourierCore
import Testing

@Suite struct RegistryTests {
    @Test func standardHasEveryBuiltInTypeWithItsPlugin() {
        let standard = AuthoriserRegistry.standard
        #expect(standard.typeNames == AuthoriserRegistry.builtIn.typeNames)
        for name in AuthoriserRegistry.builtIn.typeNames {
            let plugin = standard.plugin(named: name)
            #expect(plugin?.descriptor.type == name)
            #expect(standard[name]?.settings == AuthoriserRegistry.builtIn[name]?.settings)
        }
    }

    /// A user's plugin type, registered next to the built-in ones.
    final class Fixed: Authoriser, AuthoriserPlugin {
        static let descriptor = AuthoriserTypeDescriptor(
            type: "fixed", summary: "Sends X-Fixed.", settings: [.init("value", .string, required: true, "The value.")]
        )
        let value: String
        init(value: String) { self.value = value }
        static func make(_ instance: AuthoriserInstance, context: AuthoriserContext) throws -> any Authoriser {
            guard case .string(let s) = instance.settings["value"] else {
                throw AuthoriserError(.invalidSetting, "setting 'value' is required")
            }
            return Fixed(value: try context.secrets.resolve(s))
        }
        func authorise(_ request: inout AuthorisationRequest) async throws { request.headers.add(name: "X-Fixed", value: value) }
        func authorisationFailed(for request: AuthorisationRequest) async {}
        func refresh() async throws {}
    }

    @Test func customPluginsAndUnknownNames() async throws {
        let registry = AuthoriserRegistry.standard.registering(Fixed.self)
        #expect(registry.typeNames.contains("fixed"))
        #expect(registry["fixed"]?.summary == "Sends X-Fixed.")
        let context = AuthoriserContext(secrets: .system(environment: ["V": "v1"]), httpClient: Unreachable(), clock: { 0 })
        let authoriser = try registry.makeAuthoriser(for: makeInstance("fixed", ["value": env("V")]), context: context)
        var request = AuthorisationRequest(url: HTTPURL("https://a/")!)
        try await authoriser.authorise(&request)
        #expect(request.headers["X-Fixed"] == "v1")
        // The plugin's own error is named after the instance.
        #expect {
            _ = try registry.makeAuthoriser(for: makeInstance("fixed", [:], name: "mine"), context: context)
        } throws: { ($0 as? AuthoriserError)?.authoriser == "mine" }
        // A type known only as a descriptor (lint) has no plugin to run.
        #expect {
            _ = try AuthoriserRegistry.builtIn.makeAuthoriser(for: makeInstance("basic", [:]), context: context)
        } throws: { ($0 as? AuthoriserError)?.kind == .unknownPlugin }
        #expect {
            _ = try registry.makeAuthoriser(for: makeInstance("oauth3", [:]), context: context)
        } throws: { error in
            let e = error as? AuthoriserError
            return e?.kind == .unknownPlugin && e?.description.contains("'oauth3'") == true
        }
    }

    /// A descriptor registered for lint can later get its plugin.
    @Test func pluginReplacesADescriptorOnlyEntry() {
        var registry = AuthoriserRegistry.builtIn
        registry.register(BasicPlugin.self)
        #expect(registry.plugin(named: "basic") != nil)
        #expect(registry.typeNames == AuthoriserRegistry.builtIn.typeNames)
    }
}
