import CourierCore
import CourierKit
import Foundation

/// A typed client for the catalog API: one method per endpoint, models in and out. How its requests are sent
/// (timeouts, retries, rate limit, credentials) is the policy's business, not the client's: every request goes
/// through the data loader it is given.
struct CatalogClient: Sendable {
    /// The API's base URL, ending in `/` (e.g. `https://catalog.example.com/v1/`).
    let baseURL: String
    let loader: DataLoader

    /// Every product.
    func products() async throws(CatalogError) -> [Product] {
        try await get("products.json", as: ProductPage.self).products
    }

    /// One product; a missing one is `CatalogError.status(404, ...)`.
    func product(id: Int) async throws(CatalogError) -> Product {
        try await get("products/\(id).json", as: Product.self)
    }

    private func get<Model: Decodable>(_ path: String, as model: Model.Type) async throws(CatalogError) -> Model {
        let response: Response
        do {
            response = try await loader.load(
                Request(url: baseURL + path, headers: ["Accept": "application/json"], sourceIdentifier: "catalog")
            )
        } catch {
            throw .transport(error)
        }
        guard response.isSuccess else { throw .status(response.status, path: path) }
        do {
            return try response.decode(Model.self, using: Self.decoder)
        } catch {
            throw .undecodable(path: path, reason: "\(error)")
        }
    }

    /// The API's JSON: snake_case keys.
    private static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }
}
