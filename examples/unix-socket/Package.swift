// swift-tools-version:6.1
// A local daemon's API over its Unix domain socket (docs/policy.md, connect-to: unix:/path). CI runs it
// against a stand-in server on a socket in a temporary directory (see .ci/run).
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder, so the product reference below must use the folder's name,
// whatever the clone is called.
let courierPath = "../.."
let courier = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(courierPath)
    .standardizedFileURL.lastPathComponent.lowercased()

let package = Package(
    name: "UnixSocket",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: courierPath)
    ],
    targets: [
        .executableTarget(
            name: "unix-socket",
            dependencies: [.product(name: "CourierKit", package: courier)]
        )
    ]
)
