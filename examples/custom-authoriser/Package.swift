// swift-tools-version:6.1
// An authoriser plugin of your own, as its own small package: copy this folder, rename the type, and register
// it at start-up. CI builds and runs it (see .ci/run).
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder, so the product reference below must use the folder's name,
// whatever the clone is called.
let courierPath = "../.."
let courier = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(courierPath)
    .standardizedFileURL.lastPathComponent.lowercased()

let package = Package(
    name: "CustomAuthoriser",
    dependencies: [.package(path: courierPath)],
    targets: [
        // The plugin: depends on CourierKit only.
        .target(name: "ClientTokenAuthoriser", dependencies: [.product(name: "CourierKit", package: courier)]),
        // A program that registers it, compiles a policy that uses it, and signs a request.
        .executableTarget(
            name: "custom-authoriser-demo",
            dependencies: ["ClientTokenAuthoriser", .product(name: "CourierKit", package: courier)],
            resources: [.copy("policy.yaml")]
        ),
    ]
)
