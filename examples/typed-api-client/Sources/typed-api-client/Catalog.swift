// The catalog API's JSON, as Codable models. Keys are snake_case on the wire (`in_stock`); the client's decoder
// converts them, so the Swift names stay Swift-like.

/// One product of the catalog.
struct Product: Codable, Sendable {
    var id: Int
    var name: String
    var price: Price
    var tags: [String]
    var inStock: Bool
}

/// A price in minor units (cents), so no floating point is involved.
struct Price: Codable, Sendable, CustomStringConvertible {
    var amount: Int
    var currency: String

    var description: String {
        let cents = amount % 100
        return "\(amount / 100).\(cents < 10 ? "0" : "")\(cents) \(currency)"
    }
}

/// `GET products.json`: one page of products.
struct ProductPage: Codable, Sendable {
    var products: [Product]
    var total: Int
}
