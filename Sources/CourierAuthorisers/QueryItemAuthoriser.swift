internal import CourierCore

/// Appends `name=value` (each percent-encoded) to the request's query; its credentials never change.
final class QueryItemAuthoriser: Authoriser {
    private let item: String

    init(name: String, value: String) {
        self.item = FormEncoding.component(name) + "=" + FormEncoding.component(value)
    }

    func authorise(_ request: inout AuthorisationRequest) async throws {
        if let query = request.url.query, !query.isEmpty {
            request.url.query = query + "&" + item
        } else {
            request.url.query = item
        }
    }

    func authorisationFailed(for request: AuthorisationRequest) async {}

    func refresh() async throws {}
}
