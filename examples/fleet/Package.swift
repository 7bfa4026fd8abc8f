// swift-tools-version:6.1
// Several instances of one service share a fleet-scoped rate limit through Redis (docs/fleet.md). CI runs it
// against a local redis-server and a local server that counts what it receives (see .ci/run).
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder, so the product reference below must use the folder's name,
// whatever the clone is called.
let courierPath = "../.."
let courier = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(courierPath)
    .standardizedFileURL.lastPathComponent.lowercased()

let package = Package(
    name: "Fleet",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: courierPath)
    ],
    targets: [
        .executableTarget(
            name: "fleet",
            dependencies: [.product(name: "CourierKit", package: courier)]
        )
    ]
)
