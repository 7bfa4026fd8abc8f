// swift-tools-version:6.1
// Courier reporting to the app's swift-log, swift-metrics and swift-distributed-tracing backends: the app
// bootstraps them, Courier takes what they give as parameters. CI runs it against a local server that checks it
// receives a W3C traceparent (see .ci/run).
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder, so the product reference below must use the folder's name,
// whatever the clone is called.
let courierPath = "../.."
let courier = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(courierPath)
    .standardizedFileURL.lastPathComponent.lowercased()

let package = Package(
    name: "Observability",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: courierPath),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
    ],
    targets: [
        .executableTarget(
            name: "observability",
            dependencies: [
                .product(name: "CourierKit", package: courier),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ]
        )
    ]
)
