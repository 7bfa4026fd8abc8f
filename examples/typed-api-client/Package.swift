// swift-tools-version:6.1
// The "write your own API client" pattern: a typed client for a JSON API in a few dozen lines on top of
// CourierKit, as its own small package. Copy this folder and replace the models and endpoints with your API's.
// CI builds it and runs it against sample-api/ (see .ci/run).
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder, so the product reference below must use the folder's name,
// whatever the clone is called.
let courierPath = "../.."
let courier = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(courierPath)
    .standardizedFileURL.lastPathComponent.lowercased()

let package = Package(
    name: "TypedAPIClient",
    dependencies: [.package(path: courierPath)],
    targets: [
        .executableTarget(
            name: "typed-api-client",
            dependencies: [.product(name: "CourierKit", package: courier)],
            resources: [.copy("policy.yaml")],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility")]
        )
    ]
)
