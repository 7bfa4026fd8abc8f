// swift-tools-version:6.1
// Courier's benchmarks: a separate package so that the peers measured here (AsyncHTTPClient, URLSession, raw
// Yams) never enter the library's dependency graph. Not built by CI; see README.md for the commands.
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder, so the product reference below must use the folder's name,
// whatever the clone is called.
let courierPath = ".."
let courier = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(courierPath)
    .standardizedFileURL.lastPathComponent.lowercased()

let package = Package(
    name: "CourierBenchmarks",
    dependencies: [
        .package(path: courierPath),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.20.0"),
    ],
    targets: [
        .executableTarget(
            name: "http-bench",
            dependencies: [
                .product(name: "CourierKit", package: courier),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        .executableTarget(
            name: "policy-bench",
            dependencies: [
                .product(name: "CourierKit", package: courier),
                .product(name: "Yams", package: "Yams"),
            ]
        ),
    ]
)
