// Runs the typed catalog client against the API at the URL given on the command line:
//
//     swift run typed-api-client http://127.0.0.1:8000/v1/
//
// (serve sample-api/ with `python3 -m http.server --bind 127.0.0.1 --directory sample-api 8000` to try it).
import CourierCore
import CourierKit
import Foundation

guard CommandLine.arguments.count == 2, HTTPURL(CommandLine.arguments[1]) != nil else {
    print("usage: typed-api-client BASE-URL (an http or https URL, e.g. http://127.0.0.1:8000/v1/)")
    exit(2)
}
let base = CommandLine.arguments[1].hasSuffix("/") ? CommandLine.arguments[1] : CommandLine.arguments[1] + "/"

// One service per app, made from the policy; a factory per user; a loader per screen.
guard let policy = Bundle.module.path(forResource: "policy", ofType: "yaml") else { fatalError("policy.yaml is missing") }
let service: DataLoaderService
do {
    service = try DataLoaderService(policyFile: policy, configuration: .init(userAgent: "catalog-example/1.0"))
} catch {
    for diagnostic in error.diagnostics { print(diagnostic) }
    exit(1)
}
let catalog = CatalogClient(baseURL: base, loader: service.makeFactory().makeLoader())

do {
    let products = try await catalog.products()
    print("\(products.count) products")
    for product in products {
        print("#\(product.id) \(product.name): \(product.price)\(product.inStock ? "" : " (out of stock)")")
    }
    if let first = products.first {
        let details = try await catalog.product(id: first.id)
        print("product \(details.id) tags: \(details.tags.joined(separator: ", "))")
    }
    // Errors are typed: a missing product is a status the caller can match on.
    do {
        _ = try await catalog.product(id: 999)
    } catch .status(404, _) {
        print("product 999: not found")
    }
} catch {
    print("error: \(error)")
    exit(1)
}
