// swift-tools-version:6.1
// A large download streamed to a file through the data loader: chunks are written as they arrive, with
// backpressure, and a retried attempt starts the file again instead of mixing two bodies. CI builds and runs it
// against a local server (see .ci/run).
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder, so the product reference below must use the folder's name,
// whatever the clone is called.
let courierPath = "../.."
let courier = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(courierPath)
    .standardizedFileURL.lastPathComponent.lowercased()

let package = Package(
    name: "StreamingDownload",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: courierPath)],
    targets: [
        .executableTarget(
            name: "streaming-download",
            dependencies: [.product(name: "CourierKit", package: courier)],
            resources: [.copy("policy.yaml")]
        )
    ]
)
