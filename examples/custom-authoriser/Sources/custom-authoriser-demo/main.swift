// Registers the custom plugin beside the built-in ones, compiles a policy that uses it, and signs a request the
// way a loader would.
import ClientTokenAuthoriser
import CourierCore
import CourierKit
import CourierPolicy
import Foundation

// 1. At start-up: the standard registry plus your own types.
let registry = AuthoriserRegistry.standard.registering(ClientTokenPlugin.self)

// 2. Compile the policy against that registry: `plugin: client-token` and its settings are checked.
guard let policy = Bundle.module.path(forResource: "policy", ofType: "yaml") else { fatalError("policy.yaml is missing") }
let compilation = PolicyCompiler(registry: registry).compile(file: policy)
for diagnostic in compilation.diagnostics { print(diagnostic) }
guard let graph = compilation.graph else { exit(1) }

// 3. The route for a request names the authoriser instance; make it with the secrets of this process.
guard let url = HTTPURL("https://api.partner.example/v1/orders?limit=10"),
    let instance = graph.route(for: url, method: .get).authoriser
else { fatalError("the policy routes no authoriser for the URL") }

/// This plugin makes no HTTP requests of its own (token-fetching plugins do, through the loader's client).
struct NoHTTP: AuthoriserHTTPClient {
    func send(method: HTTPMethod, url: HTTPURL, headers: HTTPHeaders, body: [UInt8]?) async throws
        -> (status: Int, headers: HTTPHeaders, body: [UInt8])
    {
        throw CourierError(.policy, "client-token makes no HTTP requests")
    }
}
var environment = ProcessInfo.processInfo.environment
environment["CLIENT_TOKEN_SECRET"] = environment["CLIENT_TOKEN_SECRET"] ?? "example-secret"
let context = AuthoriserContext(
    secrets: .system(environment: environment), httpClient: NoHTTP(), clock: { 1_700_000_000 }
)
let authoriser = try registry.makeAuthoriser(for: instance, context: context)

// 4. Authorise a request.
func authorised(_ request: AuthorisationRequest, by authoriser: any Authoriser) async throws -> AuthorisationRequest {
    var request = request
    try await authoriser.authorise(&request)
    return request
}
let request = try await authorised(AuthorisationRequest(method: .get, url: url), by: authoriser)
for field in request.headers { print("\(field.name): \(field.value)") }
