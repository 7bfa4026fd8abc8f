internal import CourierCore

/// An authoriser whose credentials never change: it sets one header field. A 401 cannot be fixed by
/// refreshing, so ``authorisationFailed(for:)`` and ``refresh()`` do nothing.
final class HeaderAuthoriser: Authoriser {
    let name: String
    private let value: String

    init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    func authorise(_ request: inout AuthorisationRequest) async throws {
        request.headers.replaceOrAdd(name: name, value: value)
    }

    func authorisationFailed(for request: AuthorisationRequest) async {}

    func refresh() async throws {}
}
